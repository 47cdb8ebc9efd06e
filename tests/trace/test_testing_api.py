"""`testing.record_training`, `testing.assert_same_training` and the plugin's `record_training` fixture."""

import json

import pytest
from guide_loop import train

from lossscale_compat import testing


def test_two_recordings_of_one_training_agree(record_training, assert_same_training):
    assert_same_training(record_training(train), record_training(train, eager=True))


def test_another_learning_rate_fails_at_the_first_step(record_training):
    old, new = record_training(train), record_training(train, learning_rate=0.2)
    with pytest.raises(AssertionError, match=r"the runs part at step 0 \(optimizer 0's step 0") as failure:
        testing.assert_same_training(old, new)
    assert "variable " in str(failure.value)


def test_the_module_function_writes_where_it_is_told(tmp_path):
    path = testing.record_training(tmp_path / "t.jsonl", train, steps=3)
    with open(path) as f:
        records = [json.loads(line) for line in f]
    assert records[0]["program"] == "train" and records[-1]["end"] == "complete"
    assert [r["n"] for r in records if "step" in r] == [0, 1, 2]


def test_a_crash_is_recorded_and_raised(tmp_path):
    with pytest.raises(RuntimeError, match="the data loader failed at step 3"):
        testing.record_training(tmp_path / "t.jsonl", train, crash_at=3)
    with open(tmp_path / "t.jsonl") as f:
        end = json.loads(f.read().splitlines()[-1])
    assert (end["end"], end["steps"]) == ("crashed", 3)
    with pytest.raises(ValueError, match="is incomplete"):
        testing.assert_same_training(tmp_path / "t.jsonl", tmp_path / "t.jsonl")


def test_a_function_without_a_loss_scale_optimizer(tmp_path):
    with pytest.raises(ValueError, match="took no step of a loss-scale optimizer"):
        testing.record_training(tmp_path / "t.jsonl", lambda: None)


def test_recording_leaves_the_classes_as_they_were(record_training):
    import tensorflow as tf

    cls = type(tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1)))
    before = {name: getattr(cls, name) for name in ("apply_gradients", "apply") if hasattr(cls, name)}
    record_training(train, steps=1)
    assert {name: getattr(cls, name) for name in before} == before
