"""State survives: TF 2.4.0 checkpoints and H5 files load on every stack; modern checkpoints round-trip."""

import contextlib

import numpy as np
import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import (
    KERAS3,
    OPTIMIZER_GOLDENS,
    assert_states_differ,
    assert_states_match,
    build_optimizer,
    linear_model,
    state,
    train,
)

import lossscale_compat
from lossscale_compat import _flavour

CHECKPOINTS = OPTIMIZER_GOLDENS["checkpoint"]
H5 = OPTIMIZER_GOLDENS["h5"]


@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_tf24_checkpoint_restores_and_training_continues_as_on_tf24(case):
    """Loss scale, counter, iterations, slots and weights from TF 2.4.0's file; then TF 2.4.0's next steps."""
    model = linear_model(case)
    optimizer = build_optimizer(case["form"], case["inner"])
    assert_states_differ(case["restored_state_before_first_step"], state(optimizer, model.trainable_variables))
    restored = lossscale_compat.restore_tf24_checkpoint(
        str(GOLDEN_DIR / case["path"]), model=model, optimizer=optimizer
    )
    # Every key lands: TF 2.4's `decay` and `momentum` hyperparameter variables too, set on today's optimizer,
    # whose settings are floats (tests/optimizer/test_restore_hyperparameters.py).
    assert set(restored) == set(case["variables"])
    assert_states_match([case["restored_state_before_first_step"]], [state(optimizer, model.trainable_variables)])
    assert_states_match(case["continued"], train(model, optimizer, case["data_after"]["batches"]))


@pytest.mark.tf_checkpoint
@pytest.mark.skipif(not KERAS3, reason="Keras 2 still writes a model's variables under TF 2.4's names, which do match")
def test_restore_tf24_checkpoint_of_a_checkpoint_written_on_this_stack_says_so(tmp_path):
    """Its keys do start with 'model/' and 'optimizer/', but in today's layout: the error says that, not "no keys"."""
    case = CHECKPOINTS[0]
    model, optimizer = linear_model(case), build_optimizer(case["form"], case["inner"])
    train(model, optimizer, case["data_before"]["batches"])
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).write(str(tmp_path / "ckpt"))
    with pytest.raises(
        ValueError,
        match=r"Nothing in .* matched, although \d+ keys start with 'model'/ or "
        r"'optimizer'/ .*laid out as today's Keras writes them",
    ) as caught:
        lossscale_compat.restore_tf24_checkpoint(
            path, model=linear_model(case), optimizer=build_optimizer(case["form"], case["inner"])
        )
    assert "no keys start with" not in str(caught.value)


@pytest.mark.tf_checkpoint
@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_modern_checkpoint_round_trip_continues_as_on_tf24(case, tmp_path):
    """Saved and restored with tf.train.Checkpoint on this stack, training continues as TF 2.4.0's did."""
    model, optimizer = linear_model(case), build_optimizer(case["form"], case["inner"])
    assert_states_match(case["trained"], train(model, optimizer, case["data_before"]["batches"]))
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).write(str(tmp_path / "ckpt"))
    fresh_model, fresh_optimizer = linear_model(case), build_optimizer(case["form"], case["inner"])
    fresh_optimizer.build(fresh_model.trainable_variables)
    assert_states_differ(case["saved_state"], state(fresh_optimizer, fresh_model.trainable_variables))
    tf.train.Checkpoint(model=fresh_model, optimizer=fresh_optimizer).read(path).assert_consumed()
    assert_states_match([case["saved_state"]], [state(fresh_optimizer, fresh_model.trainable_variables)])
    assert_states_match(case["continued"], train(fresh_model, fresh_optimizer, case["data_after"]["batches"]))


@pytest.mark.tf_checkpoint
@pytest.mark.parametrize("direction", ["ours_to_keras", "keras_to_ours"])
def test_checkpoints_move_between_ours_and_the_stacks_own_class(direction, tmp_path):
    """Either class restores the other's checkpoint (on Keras 3 ours also saves under Keras 3's names)."""
    case = CHECKPOINTS[0]
    model = linear_model(case)
    ours = build_optimizer(case["form"], case["inner"])
    train(model, ours, case["data_before"]["batches"])
    keras = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(), initial_scale=ours.initial_scale, dynamic_growth_steps=ours.dynamic_growth_steps
    )
    keras.build(model.trainable_variables)
    source, target = (ours, keras) if direction == "ours_to_keras" else (keras, ours)
    source_scale, source_counter = _flavour.loss_scale_state_variables(source)
    target_scale, target_counter = _flavour.loss_scale_state_variables(target)
    # The source's state differs from the target's, so a restore that did nothing fails.
    source_scale.assign(float(target_scale.numpy()) * 4)
    source_counter.assign(int(target_counter.numpy()) + 3)
    saved = (float(source_scale.numpy()), int(source_counter.numpy()))
    assert (float(target_scale.numpy()), int(target_counter.numpy())) != saved
    path = tf.train.Checkpoint(optimizer=source).write(str(tmp_path / "ckpt"))
    # Ours has stepped and the checkpoint does not hold the model: it warns that TF 2.4 kept its own slots
    # (test_stepped_restore.py).
    unheld = "does not hold, outside the optimizer"
    with pytest.warns(UserWarning, match=unheld) if target is ours else contextlib.nullcontext():
        tf.train.Checkpoint(optimizer=target).read(path)
    assert (float(target_scale.numpy()), int(target_counter.numpy())) == saved


@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
@pytest.mark.parametrize("save", ["model.save", "save_weights"])
def test_keras_format_round_trip_continues_as_on_tf24(case, save, tmp_path):
    """A `.keras` file or a weights file keeps the loss scale, counter, iterations and slots."""
    model, optimizer = linear_model(case), build_optimizer(case["form"], case["inner"])
    model.compile(optimizer=optimizer, loss="mse")
    train(model, optimizer, case["data_before"]["batches"])
    fresh_model, fresh_optimizer = linear_model(case), build_optimizer(case["form"], case["inner"])
    fresh_model.compile(optimizer=fresh_optimizer, loss="mse")
    fresh_optimizer.build(fresh_model.trainable_variables)
    # A load that left a fresh model's state in place fails: that state differs from the saved one.
    assert_states_differ(case["saved_state"], state(fresh_optimizer, fresh_model.trainable_variables))
    if save == "model.save":
        model.save(tmp_path / "model.keras")
        fresh_model = tf.keras.models.load_model(tmp_path / "model.keras")
        fresh_optimizer = fresh_model.optimizer
        assert isinstance(fresh_optimizer, lossscale_compat.KerasLossScaleOptimizer)
    else:
        model.save_weights(tmp_path / "model.weights.h5")
        fresh_model.load_weights(tmp_path / "model.weights.h5")
    assert_states_match([case["saved_state"]], [state(fresh_optimizer, fresh_model.trainable_variables)])
    assert_states_match(case["continued"], train(fresh_model, fresh_optimizer, case["data_after"]["batches"]))


def keras3_state(optimizer):
    # Keras 3.0-3.6's own class never advances its `iterations`; its inner optimizer's counts the steps.
    counter = optimizer.inner_optimizer if _flavour.iterations_never_advance(optimizer) else optimizer
    return (
        float(optimizer.dynamic_scale.numpy()),
        int(optimizer.step_counter.numpy()),
        int(counter.iterations.numpy()),
        [v.numpy().tolist() for v in optimizer.inner_optimizer.variables],
    )


def compiled_model(optimizer_class):
    """A small model compiled with a dynamic loss-scale optimizer of `optimizer_class`."""
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(1)])
    model.compile(
        optimizer=optimizer_class(tf.keras.optimizers.SGD(0.1, momentum=0.5), initial_scale=8, dynamic_growth_steps=3),
        loss="mse",
    )
    return model


def fit_and_save_weights(model, path):
    model.fit(np.ones((10, 3), np.float32), np.zeros((10, 1), np.float32), batch_size=2, verbose=0)
    model.save_weights(path)


def built(model):
    model.optimizer.build(model.trainable_variables)
    return model


@pytest.mark.skipif(not KERAS3, reason="Keras 3's own LossScaleOptimizer has Keras 3's variable layout only there")
@pytest.mark.parametrize("direction", ["ours_to_keras", "keras_to_ours"])
def test_weights_files_move_between_ours_and_keras3s_class(direction, tmp_path):
    """Ours lists its variables in Keras 3's order, so a weights file moves both ways by position."""
    ours, keras = lossscale_compat.KerasLossScaleOptimizer, tf.keras.mixed_precision.LossScaleOptimizer
    source_cls, target_cls = (ours, keras) if direction == "ours_to_keras" else (keras, ours)
    source = compiled_model(source_cls)
    fit_and_save_weights(source, tmp_path / "model.weights.h5")
    target = built(compiled_model(target_cls))
    fresh = keras3_state(target.optimizer)
    target.load_weights(tmp_path / "model.weights.h5")
    assert fresh[:3] != keras3_state(source.optimizer)[:3]  # the file holds scale, count and steps of its own
    assert keras3_state(target.optimizer) == keras3_state(source.optimizer)


@pytest.mark.skipif(KERAS3, reason="Keras 2's own LossScaleOptimizer saves no loss-scale state only on Keras 2")
def test_keras2_weights_file_without_loss_scale_state_loads(tmp_path):
    """A weights file of Keras 2's own class loads into ours: the inner state lands, the scale stays initial."""
    source = compiled_model(tf.keras.mixed_precision.LossScaleOptimizer)
    fit_and_save_weights(source, tmp_path / "model.weights.h5")
    target = built(compiled_model(lossscale_compat.KerasLossScaleOptimizer))
    assert [v.numpy().tolist() for v in target.optimizer.variables] != [
        v.numpy().tolist() for v in source.optimizer.variables
    ]
    target.load_weights(tmp_path / "model.weights.h5")
    assert [v.numpy().tolist() for v in target.optimizer.variables] == [
        v.numpy().tolist() for v in source.optimizer.variables
    ]  # iterations first, then the slots
    assert float(source.optimizer.loss_scale) != target.optimizer.initial_scale
    assert (float(target.optimizer.loss_scale), int(target.optimizer.dynamic_counter.numpy())) == (
        target.optimizer.initial_scale,
        0,
    )


@pytest.mark.skipif(
    not hasattr(tf.keras.Model, "get_state_tree"),
    reason="this Keras's Model has no `get_state_tree`: Keras 2 and Keras 3.0-3.5 lack it (3.6 added it)",
)
def test_state_tree_round_trips_the_loss_scale():
    """`get_state_tree`/`set_state_tree` carry the loss-scale state, as they do for Keras 3's own class."""
    model = compiled_model(lossscale_compat.KerasLossScaleOptimizer)
    optimizer = model.optimizer
    model.fit(np.ones((4, 3), np.float32), np.zeros((4, 1), np.float32), batch_size=1, verbose=0)
    tree = model.get_state_tree(value_format="numpy_array")
    trained = keras3_state(optimizer)
    optimizer.dynamic_scale.assign(1.0)
    optimizer.step_counter.assign(0)
    optimizer.inner_optimizer.iterations.assign(0)
    assert keras3_state(optimizer)[:3] != trained[:3]
    model.set_state_tree(tree)
    assert keras3_state(optimizer) == trained


KERAS3_LEGACY_H5 = pytest.mark.xfail(
    KERAS3,
    strict=True,
    reason="Keras 3's own legacy H5 loader cannot compile TF 2.4's saved training config: it fails on the "
    "loss 'mse' (\"Could not deserialize 'keras.metrics.mse'\", keras-team/keras#19330) before it reaches "
    "the optimizer; lossscale_compat.load_tf24_h5 loads it on every stack",
)


def keras_load_model(path):
    return tf.keras.models.load_model(path)


@pytest.mark.parametrize(
    "load",
    [
        pytest.param(keras_load_model, marks=KERAS3_LEGACY_H5, id="keras_load_model"),
        pytest.param(lossscale_compat.load_tf24_h5, id="load_tf24_h5"),
    ],
)
def test_tf24_h5_loads_with_its_optimizer_and_trains_on(load):
    """TF 2.4.0's H5 file loads with its loss-scale optimizer and state, and the next epoch matches TF 2.4.0's."""
    model = load(str(GOLDEN_DIR / H5["path"]))
    optimizer = model.optimizer
    loaded = H5["loaded"]
    assert isinstance(optimizer, lossscale_compat.KerasLossScaleOptimizer)
    assert optimizer.dynamic is loaded["optimizer"]["dynamic"]
    assert float(optimizer.loss_scale) == loaded["optimizer"]["loss_scale"]  # TF 2.4 reset the scale too
    assert int(optimizer.iterations.numpy()) == loaded["optimizer"]["iterations"]
    np.testing.assert_allclose(
        model.predict(np.array(H5["predict_x"], np.float32), verbose=0), loaded["predictions"], rtol=1e-6
    )
    assert len(optimizer.get_weights()) == len(loaded["optimizer_weights"])
    for got, want in zip(optimizer.get_weights(), loaded["optimizer_weights"]):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    data = H5["data"]
    history = model.fit(
        np.array(data["x"], np.float32),
        np.array(data["y"], np.float32),
        batch_size=data["batch_size"],
        epochs=1,
        shuffle=False,
        verbose=0,
    )
    after = H5["loaded_after_one_more_epoch"]
    np.testing.assert_allclose(history.history["loss"], after["history_loss"], rtol=1e-5)
    assert_states_match(
        [{k: v for k, v in after.items() if k != "history_loss"}], [state(optimizer, model.trainable_variables)]
    )


@pytest.mark.skipif(not KERAS3, reason="Keras 2's H5 loader takes `compile` itself")
def test_the_gate_says_whether_load_model_passes_compile_to_the_h5_loader(tmp_path):
    """`keras_h5_loader_takes_compile` matches what `load_model(compile=False)` does with an H5 file it cannot compile."""

    def unknown_loss(y_true, y_pred):
        return tf.reduce_mean(y_pred - y_true)

    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss=unknown_loss)
    path = str(tmp_path / "model.h5")
    model.save(path)
    try:
        tf.keras.models.load_model(path, compile=False)
    except (TypeError, ValueError):  # it compiled anyway and could not find the loss
        takes_compile = False
    else:
        takes_compile = True
    assert takes_compile == _flavour.keras_h5_loader_takes_compile()
    assert lossscale_compat.load_tf24_h5(path, custom_objects={"unknown_loss": unknown_loss}).optimizer is not None


@pytest.mark.parametrize("inner", ["sgd", "legacy_sgd"])
def test_an_h5_saved_here_with_our_optimizer_loads_and_trains_on_as_the_saved_model(inner, tmp_path):
    """`load_tf24_h5` of a file this stack wrote with our optimizer (Keras 2 marks its configs with
    `is_legacy_optimizer`, which is no argument of ours): the next epoch is the saved model's own next epoch."""
    if inner == "legacy_sgd" and KERAS3:
        pytest.skip("Keras 3 has no legacy optimizers")
    optimizers = tf.keras.optimizers.legacy if inner == "legacy_sgd" else tf.keras.optimizers
    x, y = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2), np.arange(8, dtype=np.float32).reshape(8, 1)

    def saved(wrap, name):
        model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        model.compile(wrap(optimizers.SGD(0.05, momentum=0.9)), loss="mse")
        model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
        model.save(str(tmp_path / name))
        return model

    try:
        saved(tf.keras.mixed_precision.LossScaleOptimizer, "keras.h5")
    except ValueError as error:  # Keras 3.0-3.2 write two optimizer variables of one name into the file
        pytest.skip(f"this Keras cannot save its own LossScaleOptimizer in an .h5 file: {error}")
    model = saved(lossscale_compat.KerasLossScaleOptimizer, "ours.h5")
    path = str(tmp_path / "ours.h5")
    loaded = lossscale_compat.load_tf24_h5(path)
    assert isinstance(loaded.optimizer, lossscale_compat.KerasLossScaleOptimizer)
    assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy()) == 2
    expected = model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0).history["loss"]
    got = loaded.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, expected, rtol=1e-6)  # the momentum slots came back too
    for a, b in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
