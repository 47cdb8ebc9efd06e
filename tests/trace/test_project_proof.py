"""The proof: examples/project recorded live on TF 2.4.0 (the golden traces), then on this stack, compared.

Unmodified in legacy mode and migrated, the project compares equal to TF 2.4.0's run; copies changed on purpose
compare different at the step the change first shows, naming what differs there.
"""

import json
import os

import pytest
from project_variants import copy_project
from trace_runs import compare, lossscale_compat, read_lines, record

from lossscale_compat import _flavour

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "examples", "project", "golden_trace.jsonl")
SCHEDULE_GOLDEN = os.path.join(ROOT, "tests", "goldens", "trace_project_schedule.jsonl")
TARGET = "keras3" if _flavour.has_keras3_loss_scaling() else "tf_keras"
# Keras 3.0-3.6's own class: no step advances its `iterations` (docs/support.md), so `fit` migrated onto it parts
# from TF 2.4.0 at its first step.
ITERATIONS_FROZEN = TARGET == "keras3" and not _flavour.keras_loss_scale_optimizer_counts_steps()


def recorded(tmp_path, change=None, migrated=False):
    """Records a copy of the project (with `change`), in legacy mode or migrated; returns the trace."""
    train = copy_project(str(tmp_path / "project"), change)
    if migrated:
        done = lossscale_compat("migrate", "--write", "--target", TARGET, os.path.dirname(train))
        assert done.returncode in (0, 1), done.stderr
    trace = tmp_path / "trace.jsonl"
    done = record(trace, *([] if migrated else ["--legacy"]), train)
    assert done.returncode == 0, done.stderr
    return trace


def first_step_after_first_skip(trace, optimizer):
    steps = [s for s in read_lines(trace) if "step" in s and s["optimizer"] == optimizer]
    return next(s["step"] for s in steps if s["skipped"]) + 1


def assert_parts_at_first_step_on_iterations(report):
    first = report["first_difference"]
    assert first["n"] == 0 and first["differences"], report
    assert all(d.startswith("iterations: ") and d.endswith(" != 0 (new)") for d in first["differences"]), report


def test_the_golden_traces_come_from_tf24():
    for path in (GOLDEN, SCHEDULE_GOLDEN):
        header = read_lines(path)[0]
        assert header["stack"]["tensorflow"] == "2.4.0" and header["stack"]["keras"] == "tf.keras 2.4.0"
        assert read_lines(path)[-1]["end"] == "complete"


@pytest.mark.tf_checkpoint  # the project's loop checkpoints its optimizer
@pytest.mark.parametrize("migrated", [False, True], ids=["legacy mode", "migrated"])
def test_the_project_trains_as_on_tf24(tmp_path, migrated):
    code, report, error = compare(GOLDEN, recorded(tmp_path, migrated=migrated))
    if migrated and ITERATIONS_FROZEN:
        assert_parts_at_first_step_on_iterations(report)
        return
    assert (code, error) == (0, ""), report
    # Migrated to Keras 3, `fit` gets Keras 3's own class: its `iterations` leaves the skipped steps out (a note).
    classes = [o["class"] for o in read_lines(tmp_path / "trace.jsonl") if "class" in o]
    keras3_own = "keras.src.optimizers.loss_scale_optimizer.LossScaleOptimizer" in classes
    assert bool(report["notes"]) == keras3_own
    assert keras3_own == (migrated and TARGET == "keras3")


@pytest.mark.tf_checkpoint  # the project's loop checkpoints its optimizer
@pytest.mark.parametrize("change", ["learning rate", "no unscaling"])
def test_a_changed_custom_loop_parts_at_its_first_step(tmp_path, change):
    code, report, _ = compare(GOLDEN, recorded(tmp_path, change))
    first = report["first_difference"]
    assert code == 1 and (first["step"], first["optimizer"], first["n"]) == (0, 0, 0)
    assert first["differences"] and all(d.startswith("variable ") for d in first["differences"])


@pytest.mark.tf_checkpoint  # the project's loop checkpoints its optimizer
def test_keras3_class_where_tf24_iterations_mattered(tmp_path):
    """`fit`'s learning rate decays with `iterations`; migrated, `fit` gets the stack's own class."""
    trace = recorded(tmp_path, "schedule", migrated=True)
    code, report, _ = compare(SCHEDULE_GOLDEN, trace)
    if TARGET != "keras3":  # Keras 2's own class counts skipped steps as TF 2.4 did
        assert (code, report["notes"]) == (0, [])
        return
    fit = read_lines(SCHEDULE_GOLDEN)[-2]["optimizer"]
    first = report["first_difference"]
    if ITERATIONS_FROZEN:
        assert code == 1 and first["optimizer"] == fit
        assert_parts_at_first_step_on_iterations(report)
        return
    assert code == 1 and (first["step"], first["optimizer"]) == (first_step_after_first_skip(SCHEDULE_GOLDEN, fit), fit)
    assert all(d.startswith("variable ") for d in first["differences"])
    assert "leaves skipped steps out of `iterations`" in report["notes"][0]
    text = lossscale_compat("compare", SCHEDULE_GOLDEN, trace).stdout
    assert "`iterations` parted first" in text and "KerasLossScaleOptimizer" in text
