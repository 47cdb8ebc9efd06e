"""`lossscale-compat record` on programs that train with the stack's own loss-scale optimizer.

Runs on every stack, TF 2.4.0's included (`nox -s record-tf24`): the programs use TF 2.4-era API only.
"""

import json
import os

import numpy as np
import pytest
from trace_runs import compare, read_lines, record

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "guide_loop.py")
STEPS, OVERFLOW_AT = 6, 2  # guide_loop.py's defaults


def our_lines(stderr):
    """record's own lines on stderr (TensorFlow logs there too)."""
    return [line for line in stderr.splitlines() if line.startswith("lossscale-compat record: ")]


def steps_of(trace):
    return [r for r in read_lines(trace) if "step" in r]


@pytest.mark.parametrize("mode", [[], ["--eager"]], ids=["tf.function", "eager"])
def test_every_step_is_recorded_with_its_loss_and_skip(tmp_path, mode):
    trace = tmp_path / "trace.jsonl"
    done = record(trace, PROGRAM, *mode)
    assert done.returncode == 0, done.stderr
    losses = json.loads(done.stdout.strip().splitlines()[-1])
    steps = steps_of(trace)
    assert [s["n"] for s in steps] == list(range(STEPS))
    assert [s["loss"] for s in steps] == losses  # the value the program passed to get_scaled_loss / scale_loss
    assert [s["skipped"] for s in steps] == [n == OVERFLOW_AT for n in range(STEPS)]
    assert steps[OVERFLOW_AT]["scale_after"] == steps[OVERFLOW_AT]["scale_before"] / 2
    assert read_lines(trace)[-1]["end"] == "complete"


def test_eager_and_tf_function_runs_compare_equal(tmp_path):
    graph, eager = tmp_path / "graph.jsonl", tmp_path / "eager.jsonl"
    assert record(graph, PROGRAM).returncode == 0
    assert record(eager, PROGRAM, "--eager").returncode == 0
    code, report, _ = compare(graph, eager)
    assert (code, report["same"]) == (0, True)


def test_fit_is_recorded(tmp_path):
    trace = tmp_path / "fit.jsonl"
    done = record(trace, PROGRAM, "--fit")
    assert done.returncode == 0, done.stderr
    steps = steps_of(trace)
    assert len(steps) == STEPS and steps[OVERFLOW_AT]["skipped"]
    assert all(s["loss"] is not None for s in steps)  # the loss fit passed to get_scaled_loss / scale_loss


def test_a_crash_halfway_keeps_the_steps_before_it(tmp_path):
    trace = tmp_path / "crash.jsonl"
    done = record(trace, PROGRAM, "--crash-at", 4)
    assert done.returncode == 1
    assert "RuntimeError: the data loader failed at step 4" in done.stderr  # the program's own traceback
    assert "stopped (exit 1) after 4 loss-scaled step(s)" in done.stderr and "marked incomplete" in done.stderr
    end = read_lines(trace)[-1]
    assert (end["end"], end["steps"], end["error"]) == ("crashed", 4, "RuntimeError: the data loader failed at step 4")
    code, _, error = compare(trace, trace)
    assert code == 2 and "is incomplete" in error


def test_a_step_compiled_with_xla_is_refused_with_what_to_do(tmp_path):
    trace = tmp_path / "xla.jsonl"
    done = record(trace, PROGRAM, "--xla")
    assert done.returncode == 1
    end = read_lines(trace)[-1]
    assert end["end"] == "crashed" and end["error"].startswith("ValueError: lossscale-compat record cannot record a "
                                                                 "step compiled with XLA")
    assert "jit_compile=False" in end["error"] and "jit_compile=False" in done.stderr


def test_a_program_without_a_loss_scale_optimizer(tmp_path):
    program = tmp_path / "plain.py"
    program.write_text("import tensorflow as tf\nprint(float(tf.reduce_sum(tf.ones([3]))))\n")
    done = record(tmp_path / "t.jsonl", program)
    assert done.returncode == 2
    assert len(our_lines(done.stderr)) == 1 and "took no step of a loss-scale optimizer" in done.stderr
    assert read_lines(tmp_path / "t.jsonl")[-1]["end"] == "no-steps"


@pytest.mark.parametrize("mode", [[], ["--eager"]], ids=["tf.function", "eager"])
def test_steps_and_every(tmp_path, mode):
    """Thinned runs skip the digest of the steps they leave out; the steps they keep are recorded as in a full run."""
    assert record(tmp_path / "all.jsonl", PROGRAM, *mode).returncode == 0
    every_step = {s["n"]: dict(s, step=None) for s in steps_of(tmp_path / "all.jsonl")}
    assert record(tmp_path / "first.jsonl", "--steps", 2, PROGRAM, *mode).returncode == 0
    assert [dict(s, step=None) for s in steps_of(tmp_path / "first.jsonl")] == [every_step[0], every_step[1]]
    assert read_lines(tmp_path / "first.jsonl")[-1]["steps_taken"] == STEPS
    assert record(tmp_path / "thin.jsonl", "--every", 2, PROGRAM, *mode).returncode == 0
    thin = steps_of(tmp_path / "thin.jsonl")
    assert [s["step"] for s in thin] == list(range(len(thin)))
    assert [dict(s, step=None) for s in thin] == [every_step[n] for n in range(0, STEPS, 2)]
    assert read_lines(tmp_path / "thin.jsonl")[-1]["steps_taken"] == STEPS


def test_full_values(tmp_path):
    assert record(tmp_path / "full.jsonl", "--full", PROGRAM).returncode == 0
    for step in steps_of(tmp_path / "full.jsonl"):
        sums = [np.sum(np.asarray(v, dtype=np.float64)) for v in step["values"]]
        np.testing.assert_allclose(sums, step["sum"], rtol=1e-6, atol=1e-6)  # the digest sums in float32


def test_a_module(tmp_path):
    trace = tmp_path / "module.jsonl"
    done = record(trace, "-m", "guide_loop", "--steps", 3, cwd=HERE)
    assert done.returncode == 0, done.stderr
    assert len(steps_of(trace)) == 3 and read_lines(trace)[0]["program"] == "-m guide_loop --steps 3"


@pytest.mark.parametrize("args, message", [
    ([], "name the program to record"),
    (["no_such_script.py"], "no such script: no_such_script.py"),
    (["--steps", "0", PROGRAM], "--steps and --every take a whole number of at least 1"),
])
def test_usage_errors(tmp_path, args, message):
    done = record(tmp_path / "t.jsonl", *args)
    assert (done.returncode, our_lines(done.stderr)) == (2, done.stderr.splitlines()) and message in done.stderr
