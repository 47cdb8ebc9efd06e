"""MultiWorkerMirroredStrategy over 2 worker processes on loopback trains as one worker does."""

import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np

SCRIPT = pathlib.Path(__file__).with_name("multi_worker_train.py")
TIMEOUT = 240


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def run_workers(tmp_path, tf_configs):
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    procs, outputs = [], []
    for index, tf_config in enumerate(tf_configs):
        out = tmp_path / f"{'single' if tf_config is None else 'worker'}{index}.json"
        worker_env = dict(env, CUDA_VISIBLE_DEVICES="")
        if tf_config is not None:
            worker_env["TF_CONFIG"] = json.dumps(tf_config)
        procs.append(subprocess.Popen([sys.executable, str(SCRIPT), str(out)], env=worker_env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        outputs.append(out)
    try:
        logs = [p.communicate(timeout=TIMEOUT)[0].decode(errors="replace") for p in procs]
    finally:
        for p in procs:
            p.kill()
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log[-3000:]
    return [json.loads(out.read_text()) for out in outputs]


def test_two_workers_on_loopback_train_like_one(tmp_path):
    """A NaN in one worker's share skips the step on both; scales, iterations and weights match one worker."""
    (single,) = run_workers(tmp_path, [None])
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    results = run_workers(tmp_path, [{"cluster": cluster, "task": {"type": "worker", "index": i}} for i in range(2)])
    assert [r["workers"] for r in results] == [2, 2] and single["workers"] == 1
    skipped = [i for i, h in enumerate(single["history"]) if i and h["weights"] == single["history"][i - 1]["weights"]]
    assert skipped, "the reference run must skip a step"
    for result in results:
        assert len(result["history"]) == len(single["history"])
        for got, want in zip(result["history"], single["history"]):
            assert got["loss_scale"] == want["loss_scale"] and got["iterations"] == want["iterations"]
            assert len(got["weights"]) == len(want["weights"])
            for got_w, want_w in zip(got["weights"], want["weights"]):
                np.testing.assert_allclose(got_w, want_w, rtol=1e-6, atol=1e-7)
