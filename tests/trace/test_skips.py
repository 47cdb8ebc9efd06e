"""`skipped` in a trace: the loss-scale optimizer did not apply the step's gradients, whatever else writes the weights.

Runs on the whole-suite stacks and on TF 2.4.0 (`nox -s record-tf24`), not in CORE_TESTS: the programs use TF
2.4-era API only.
"""

import math

import pytest
from trace_runs import read_lines, record
from test_record import OVERFLOW_AT, PROGRAM, STEPS, steps_of

MODES = pytest.mark.parametrize("mode", [[], ["--eager"]], ids=["tf.function", "eager"])
NO_FIXED_SCALE = 3  # guide_loop.py's exit code on a stack whose class has a dynamic scale only (Keras 3)


@MODES
def test_weights_written_between_steps_at_the_floor_of_the_scale(tmp_path, mode):
    """Every step starts from the weights the loop restores; a dynamic scale of 1 cannot drop on TF 2.4 or Keras 2.

    Each applied step ends where the one before ended (the same start, the same batch), and the skipped step ends
    elsewhere (at the restored weights): neither the variables nor, on TF 2.4 and Keras 2, the scale show the skip.
    """
    trace = tmp_path / "trace.jsonl"
    done = record(trace, PROGRAM, "--restore-each-step", "--initial-scale", 1, "--overflow-target", "inf", *mode)
    assert done.returncode == 0, done.stderr
    steps = steps_of(trace)
    assert [s["skipped"] for s in steps] == [n == OVERFLOW_AT for n in range(STEPS)]
    applied = [s for s in steps if not s["skipped"]]
    assert all((s["sum"], s["norm"]) == (applied[0]["sum"], applied[0]["norm"]) for s in applied)
    assert steps[OVERFLOW_AT]["sum"] != applied[0]["sum"]
    assert steps[OVERFLOW_AT]["scale_after"] in (1.0, 0.5)  # TF 2.4 and Keras 2 keep their floor; Keras 3 halves


@MODES
def test_a_fixed_scale_applies_non_finite_gradients(tmp_path, mode):
    trace = tmp_path / "trace.jsonl"
    done = record(trace, PROGRAM, "--fixed-scale", 1, "--overflow-target", "inf", *mode)
    if done.returncode == NO_FIXED_SCALE:
        pytest.skip("this stack's LossScaleOptimizer has a dynamic scale only")
    assert done.returncode == 0, done.stderr
    steps = steps_of(trace)
    assert [s["skipped"] for s in steps] == [False] * STEPS
    assert not math.isfinite(steps[OVERFLOW_AT]["sum"][0])  # the step was applied: the weights are not finite
    assert read_lines(trace)[-1]["end"] == "complete"
