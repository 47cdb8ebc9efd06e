"""Records examples/project's training on TF 2.4.0 with `lossscale-compat record`: the goldens of the proof.

    python tests/recorders/record_tf24_project_traces.py     # on TensorFlow 2.4.0 (Python 3.8), from the repo root

Writes examples/project/golden_trace.jsonl (the project as it is) and tests/goldens/trace_project_schedule.jsonl
(the project with `fit`'s learning rate decaying with `iterations`, tests/trace/project_variants.py). Each is the
trace `lossscale-compat record -o TRACE examples/project/train.py` writes, run live on TF 2.4.0's own classes.
"""

import os
import subprocess
import sys
import tempfile

import tf24_recording  # noqa: F401 - checks that this is TF 2.4.0

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "trace"))
import project_variants  # noqa: E402

ENV = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")


def record(train, trace):
    command = [sys.executable, "-m", "lossscale_compat", "record", "-o", trace, train]
    subprocess.run(command, env=ENV, check=True, cwd=os.path.dirname(train))  # `-m` puts the cwd on sys.path
    print("wrote", os.path.relpath(trace, ROOT))


def main():
    with tempfile.TemporaryDirectory() as scratch:
        record(project_variants.copy_project(os.path.join(scratch, "project")),
               os.path.join(ROOT, "examples", "project", "golden_trace.jsonl"))
        record(project_variants.copy_project(os.path.join(scratch, "schedule"), "schedule"),
               os.path.join(ROOT, "tests", "goldens", "trace_project_schedule.jsonl"))


if __name__ == "__main__":
    main()
