"""`restore_tf24_checkpoint` is all or nothing: any mismatch raises one error listing them all, and changes nothing."""

import shutil

import numpy as np
import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import KERAS3, OPTIMIZER_GOLDENS, build_optimizer, linear_model, specs, train

import lossscale_compat

CASE = next(c for c in OPTIMIZER_GOLDENS["checkpoint"] if c["inner"]["config"].get("momentum"))
PATH = str(GOLDEN_DIR / CASE["path"])


def snapshot(model, optimizer):
    """Every variable of the model and optimizer (its loss scale included), as bytes."""
    variables = optimizer.variables
    values = list(model.weights) + list(variables() if callable(variables) else variables)  # a method on OptimizerV2
    values += [getattr(optimizer, name) for name in ("loss_scale", "dynamic_counter", "iterations")]
    return [None if v is None else np.asarray(v.numpy()).tobytes() for v in values]


def trained(model, optimizer):
    """`model` and `optimizer` after the golden's steps, so their state differs from the checkpoint's."""
    train(model, optimizer, CASE["data_before"]["batches"][:1])
    return model, optimizer


def assert_refused_unchanged(model, optimizer, match, **kwargs):
    before = snapshot(model, optimizer)
    with pytest.raises(ValueError, match=match) as caught:
        lossscale_compat.restore_tf24_checkpoint(kwargs.pop("path", PATH), model=model, optimizer=optimizer, **kwargs)
    assert snapshot(model, optimizer) == before
    assert str(caught.value).startswith("Nothing was restored from")
    return str(caught.value)


def other_inner(class_name, optimizers=None, **config):
    return build_optimizer(CASE["form"], {"class_name": class_name, "config": config}, optimizers)


def test_the_golden_restores_into_the_matching_model_and_optimizer():
    """The control: the same model and optimizer as TF 2.4's do restore (so the refusals below are the mismatch)."""
    model, optimizer = trained(linear_model(CASE), build_optimizer(CASE["form"], CASE["inner"]))
    before = snapshot(model, optimizer)
    assert lossscale_compat.restore_tf24_checkpoint(PATH, model=model, optimizer=optimizer)
    assert snapshot(model, optimizer) != before


def test_a_kernel_of_another_shape_changes_nothing():
    wide = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1, name="dense")])
    model, optimizer = wide, build_optimizer(CASE["form"], CASE["inner"])
    optimizer.build(model.trainable_variables)
    message = assert_refused_unchanged(model, optimizer, r"holds shape \(3, 1\), but .* has shape \(4, 1\)")
    assert "momentum" in message  # the kernel's slot has the wrong shape too: listed in the same error


@pytest.mark.parametrize("inner", [("Adam", {}), ("SGD", {})], ids=["adam", "sgd_without_momentum"])
def test_an_optimizer_without_the_checkpoints_momentum_changes_nothing(inner):
    class_name, config = inner
    model, optimizer = trained(linear_model(CASE), other_inner(class_name, learning_rate=0.1, **config))
    message = assert_refused_unchanged(model, optimizer, r"is slot 'momentum', which .* does not keep")
    assert message.count("is slot 'momentum'") == 2  # kernel and bias: both listed, in one error


@pytest.mark.skipif(KERAS3, reason="Keras 3 has no legacy (OptimizerV2) optimizers")
@pytest.mark.parametrize("inner", [("Adam", {}), ("SGD", {})], ids=["adam", "sgd_without_momentum"])
def test_a_legacy_optimizer_without_the_checkpoints_momentum_changes_nothing(inner):
    """The same refusal over TF 2.4's OptimizerV2, whose slots are looked up by TF 2.4's names."""
    class_name, config = inner
    optimizer = other_inner(class_name, tf.keras.optimizers.legacy, learning_rate=0.1, **config)
    model, optimizer = trained(linear_model(CASE), optimizer)
    message = assert_refused_unchanged(model, optimizer, r"is slot 'momentum', which .* does not keep")
    assert message.count("is slot 'momentum'") == 2


def test_a_truncated_data_file_changes_nothing(tmp_path):
    for source in GOLDEN_DIR.glob(CASE["path"] + ".*"):
        shutil.copy(source, tmp_path / source.name)
    data = next(tmp_path.glob("*.data-*"))
    data.write_bytes(data.read_bytes()[:8])
    model, optimizer = trained(linear_model(CASE), build_optimizer(CASE["form"], CASE["inner"]))
    assert_refused_unchanged(model, optimizer, r"cannot be read .*the file is damaged",
                             path=str(tmp_path / CASE["path"].split("/")[-1]))


@pytest.mark.parametrize("which", ["model_key", "optimizer_key"])
def test_a_key_that_matches_nothing_is_an_error_and_changes_nothing(which):
    model, optimizer = trained(linear_model(CASE), build_optimizer(CASE["form"], CASE["inner"]))
    assert_refused_unchanged(model, optimizer, rf"{which}='net' matches nothing", **{which: "net"})


def test_a_value_of_another_kind_of_dtype_is_a_mismatch():
    """Floats go to floats and integers to integers (float32 into float16, int64 into int32 are casts, as before)."""
    from lossscale_compat import _checkpoint

    counter = tf.Variable(tf.zeros((3, 1), tf.int32), name="counter")
    assert "holds float32, but counter" in _checkpoint._mismatch("k", counter, (3, 1), tf.float32)
    assert _checkpoint._mismatch("k", counter, (3, 1), tf.int64) is None
    assert _checkpoint._mismatch("k", tf.Variable(tf.zeros((3, 1), tf.float16)), (3, 1), tf.float32) is None
