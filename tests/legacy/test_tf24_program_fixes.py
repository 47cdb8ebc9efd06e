"""TF 2.4-era code that broke in legacy mode (issue #23's list), each compared with the same program written today."""

import numpy as np
import pytest
import tensorflow as tf

import lossscale_compat
from lossscale_compat import _flavour

KERAS3 = _flavour.has_keras3_loss_scaling()
keras2_only = pytest.mark.skipif(KERAS3, reason="a Keras 2 code path (Keras 3 has no such base-class behaviour)")


@pytest.fixture(autouse=True)
def legacy_mode():
    lossscale_compat.install()
    yield
    lossscale_compat.uninstall()


def mp():
    return tf.keras.mixed_precision


def train_one_step(opt, var_list_of=lambda v: [v]):
    var = tf.Variable([1.0, 2.0])
    opt.minimize(lambda: tf.reduce_sum(var * 2.0), var_list_of(var))
    return var.numpy()


def test_failed_construction_leaves_the_inner_optimizer_free():
    """A constructor call that raises does not count as wrapping: the corrected call then works."""
    inner = tf.keras.optimizers.SGD(1.0)
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        mp().LossScaleOptimizer(inner, dynamic=False, initial_scale=2, dynamic_growth_steps=3)
    opt = mp().LossScaleOptimizer(inner, dynamic=False, initial_scale=2)
    assert float(opt.loss_scale) == 2.0
    with pytest.raises(ValueError, match="already wrapped"):
        mp().LossScaleOptimizer(inner)


@pytest.mark.skipif(KERAS3, reason="Keras 3's DTypePolicy has no '_infer' (see docs/tf24_conformance.md)")
def test_set_policy_infer():
    """`set_policy('_infer')` sets TF 1's inferring policy, as TF 2.4 allowed."""
    experimental = mp().experimental
    try:
        experimental.set_policy("_infer")
        assert experimental.global_policy().name == "_infer"
        assert experimental.global_policy().compute_dtype is None
    finally:
        experimental.set_policy("float32")


def optimizer_variables(optimizer):
    """Today's `variables` property, or TF 2.4's `variables()` method (OptimizerV2, with tf24_optimizers)."""
    return optimizer.variables() if callable(optimizer.variables) else optimizer.variables


@keras2_only
@pytest.mark.parametrize("make", ["dynamic", "fixed", "adam"])
def test_h5_model_with_loss_scaling_loads(tmp_path, make):
    """`model.save('m.h5')` then `load_model` gives back the optimizer and its weights, as on TF 2.4."""
    inner = tf.keras.optimizers.Adam(0.1) if make == "adam" else tf.keras.optimizers.SGD(0.1)
    opt = mp().LossScaleOptimizer(inner, dynamic=False, initial_scale=4) if make == "fixed" else \
        mp().experimental.LossScaleOptimizer(inner, "dynamic")
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.compile(opt, "mse")
    model.fit(np.ones((4, 3), "float32"), np.ones((4, 2), "float32"), verbose=0)
    path = str(tmp_path / "m.h5")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert float(loaded.optimizer.loss_scale) == float(opt.loss_scale)
    for saved, restored in zip(optimizer_variables(opt), optimizer_variables(loaded.optimizer)):
        np.testing.assert_array_equal(saved.numpy(), restored.numpy())


def test_set_weights_of_the_wrong_length_says_what_to_do():
    """The weight-count error names the optimizer instead of failing on a missing `name`."""
    opt = mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0))
    with pytest.raises(ValueError, match="weight list of length 5"):
        opt.set_weights([np.zeros(())] * 5)


class TF24StyleSGD(tf.keras.optimizers.SGD):
    """A TF 2.4 subclass overriding `apply_gradients` with TF 2.4's signature."""

    calls = 0

    def apply_gradients(self, grads_and_vars, name=None, experimental_aggregate_gradients=True):
        TF24StyleSGD.calls += 1
        return super().apply_gradients(grads_and_vars)


def test_inner_apply_gradients_override_with_tf24_signature():
    """The inner optimizer's TF 2.4-style `apply_gradients` override is called, and trains as the plain class."""
    TF24StyleSGD.calls = 0
    overridden = train_one_step(mp().LossScaleOptimizer(TF24StyleSGD(1.0)))
    assert TF24StyleSGD.calls == 1
    np.testing.assert_array_equal(overridden, train_one_step(mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0))))


def test_apply_gradients_takes_experimental_aggregate_gradients():
    """`apply_gradients(..., experimental_aggregate_gradients=False)`, as tensorflow/models' loops call it."""
    results = []
    for aggregate in (True, False):
        var = tf.Variable([1.0, 2.0])
        opt = mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0))
        with tf.GradientTape() as tape:
            loss = opt.get_scaled_loss(tf.reduce_sum(var * 2.0))
        grads = opt.get_unscaled_gradients(tape.gradient(loss, [var]))
        opt.apply_gradients(zip(grads, [var]), experimental_aggregate_gradients=aggregate)
        results.append(var.numpy())
    np.testing.assert_array_equal(results[0], results[1])


def test_apply_gradients_without_aggregation_under_mirrored_strategy(mirrored):
    """With `experimental_aggregate_gradients=False` each replica's gradient is applied as given (not summed)."""
    with mirrored.scope():
        var = tf.Variable([1.0, 2.0])
        opt = mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), dynamic=False, initial_scale=1)

    def step(aggregate):
        def replica_step():
            grads = [tf.constant([1.0, 1.0])]
            opt.apply_gradients(zip(grads, [var]), experimental_aggregate_gradients=aggregate)

        mirrored.run(tf.function(replica_step))

    step(True)
    summed = var.numpy()
    step(False)
    once = var.numpy()
    np.testing.assert_array_equal(np.array([1.0, 2.0]) - summed, 2 * (summed - once))


@pytest.mark.parametrize("restore_after_a_step", [False, True])
def test_restoring_one_checkpoint_twice(tmp_path, restore_after_a_step):
    """`Checkpoint.restore` of the same file twice, before or after the next step, restores both times."""
    def make():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        model.compile(mp().experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1, momentum=0.5), "dynamic"),
                      "mse")
        return model

    x, y = np.ones((4, 3), "float32"), np.ones((4, 2), "float32")
    model = make()
    model.fit(x, y, verbose=0)
    path = tf.train.Checkpoint(model=model, optimizer=model.optimizer).save(str(tmp_path / "ckpt"))
    saved = [w.numpy() for w in model.weights]
    again = make()
    checkpoint = tf.train.Checkpoint(model=again, optimizer=again.optimizer)
    checkpoint.restore(path)
    if restore_after_a_step:
        again.fit(x, y, verbose=0)
    checkpoint.restore(path)
    for expected, restored in zip(saved, again.weights):
        np.testing.assert_array_equal(expected, restored.numpy())


def v1_graph_training(loss_scale_of):
    """Two TF1 graph steps of TensorFlow's own compat.v1 loss-scale optimizer; (var, scale, #variables)."""
    with tf.Graph().as_default():
        var = tf.compat.v1.Variable([5.0])
        loss_scale = loss_scale_of()
        opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(2.0), loss_scale)
        step = opt.minimize(var * 1.0, var_list=[var])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(step)
            session.run(step)
            return session.run(var).tolist(), float(session.run(loss_scale())), len(opt.variables())


def test_compat_v1_optimizer_takes_tf24_dynamic_loss_scale():
    """`tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt, DynamicLossScale(...))` trains the
    same as with TensorFlow's own `tf.compat.v1.mixed_precision.DynamicLossScale`, updating the object passed."""
    kwargs = {"initial_loss_scale": 2, "increment_period": 1, "multiplier": 2}
    ours = v1_graph_training(lambda: tf.mixed_precision.experimental.DynamicLossScale(**kwargs))
    theirs = v1_graph_training(lambda: tf.compat.v1.mixed_precision.DynamicLossScale(**kwargs))
    assert ours == theirs
    assert ours[1] > 2.0  # the object the program holds was updated


def test_minimize_takes_a_single_variable():
    """`opt.minimize(loss, var_list=v)` with one variable, as TF 2.4's OptimizerV2 took it."""
    single = train_one_step(mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0)), lambda v: v)
    listed = train_one_step(mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0)))
    np.testing.assert_array_equal(single, listed)


def test_equal_constructions_have_equal_configs():
    """Two equal constructions compare equal by `get_config()`, as TF 2.4's regression tests compare them."""
    for make in (
        lambda: mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0)),
        lambda: mp().experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), "dynamic"),
        lambda: mp().experimental.LossScaleOptimizer(tf.keras.optimizers.Adam(1.0), 4),
    ):
        assert make().get_config() == make().get_config()
    assert mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0)).get_config() == \
        mp().experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), "dynamic").get_config()


def test_config_round_trips_to_an_equal_config():
    """from_config(get_config()) gives the same config back."""
    opt = mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0, momentum=0.5), initial_scale=8)
    assert type(opt).from_config(opt.get_config()).get_config() == opt.get_config()


def test_lr_is_learning_rate_on_both_optimizers():
    """`opt.lr` and `opt.inner_optimizer.lr` read and write `learning_rate`, as on TF 2.4."""
    opt = mp().LossScaleOptimizer(tf.keras.optimizers.SGD(1.0))
    opt.inner_optimizer.lr = 0.5
    assert float(opt.lr) == float(opt.inner_optimizer.learning_rate) == 0.5
    opt.lr = 0.25
    assert float(opt.inner_optimizer.lr) == float(opt.learning_rate) == 0.25


def test_lr_alias_goes_with_uninstall():
    """The `lr` legacy mode adds to Keras 3's optimizers is gone after `uninstall()`."""
    lossscale_compat.uninstall()
    try:
        assert hasattr(tf.keras.optimizers.SGD(1.0), "lr") == (not KERAS3)
    finally:
        lossscale_compat.install()


@pytest.mark.parametrize("experimental", [False, True])
def test_error_messages_name_tf24s_class(experimental):
    """A missing attribute is reported under TF 2.4's class name, as TF 2.4.0 did."""
    inner = tf.keras.optimizers.SGD(1.0)
    opt = mp().experimental.LossScaleOptimizer(inner, "dynamic") if experimental else mp().LossScaleOptimizer(inner)
    name = "LossScaleOptimizerV1" if experimental else "LossScaleOptimizer"
    with pytest.raises(AttributeError, match=f"^'{name}' object has no attribute 'nesterov'$"):
        opt.nesterov  # noqa: B018


def test_subclass_keeps_its_own_name_in_messages():
    """A user's subclass is named by its own class name, as on TF 2.4."""
    class MyLSO(mp().LossScaleOptimizer):
        pass

    with pytest.raises(AttributeError, match="^'MyLSO' object"):
        MyLSO(tf.keras.optimizers.SGD(1.0)).nesterov  # noqa: B018


# --- TF 2.4's OptimizerV2 on Keras 2: what legacy mode gives (docs/legacy_mode.md, "Optimizers") -------------

def schedule():
    return tf.keras.optimizers.schedules.ExponentialDecay(1.0, 10, 0.5)


@pytest.fixture
def by_default(monkeypatch):
    """Legacy mode as `install()` sets it up with LOSSSCALE_COMPAT_TF24_OPTIMIZERS unset."""
    lossscale_compat.uninstall()
    monkeypatch.delenv("LOSSSCALE_COMPAT_TF24_OPTIMIZERS", raising=False)
    lossscale_compat.install()


@keras2_only
def test_tf24s_optimizers_are_the_default_in_legacy_mode(by_default):
    """`tf.keras.optimizers.SGD` is TF 2.4's `OptimizerV2`, in TF 2.4's class (`type(opt)` is the name used)."""
    opt = mp().LossScaleOptimizer(tf.keras.optimizers.SGD(schedule()))
    assert _flavour.is_legacy_keras_optimizer(opt.inner_optimizer)
    assert type(opt) is mp().LossScaleOptimizer
    assert float(opt.learning_rate(5)) == float(schedule()(5))


@keras2_only
def test_with_the_opt_out_todays_optimizers_stay_todays_in_legacy_mode():
    """`tf.keras.optimizers.SGD` stays today's optimizer; its schedule takes a step all the same (issue #34)."""
    lossscale_compat.uninstall()
    lossscale_compat.install(tf24_optimizers=False)
    opt = mp().LossScaleOptimizer(tf.keras.optimizers.SGD(schedule()))
    assert not _flavour.is_legacy_keras_optimizer(opt.inner_optimizer)
    assert type(opt) is mp().LossScaleOptimizer is lossscale_compat.KerasLossScaleOptimizer
    assert float(opt.learning_rate(5)) == float(schedule()(5))


@keras2_only
@pytest.mark.parametrize("form", ["v2", "v1"])
def test_tf24s_names_build_the_modern_form_for_todays_optimizers(by_default, form):
    """Given one of today's optimizers (`tf.keras.optimizers.experimental`), TF 2.4's names build the form over it,
    as Keras 2's own class does the other way round; either form is an instance of both names."""
    opt = wrap_tf24(form, tf.keras.optimizers.experimental.SGD(0.5))
    assert not _flavour.is_legacy_keras_optimizer(opt.inner_optimizer)
    expected = lossscale_compat.KerasLossScaleOptimizer if form == "v2" else lossscale_compat.LossScaleOptimizer
    assert type(opt) is expected and type(opt) is not (
        mp().LossScaleOptimizer if form == "v2" else mp().experimental.LossScaleOptimizer)
    assert isinstance(opt, mp().LossScaleOptimizer)
    assert isinstance(opt, mp().experimental.LossScaleOptimizer) is (form == "v1")
    legacy = wrap_tf24(form, tf.keras.optimizers.SGD(0.5))
    assert isinstance(legacy, expected) and isinstance(legacy, lossscale_compat.KerasLossScaleOptimizer)
    assert isinstance(legacy, lossscale_compat.LossScaleOptimizer) is (form == "v1")
    var = tf.Variable([1.0, 2.0])
    opt.minimize(lambda: tf.reduce_sum(var * 2.0), [var])
    np.testing.assert_allclose(var.numpy(), [0.0, 1.0])
    assert type(type(opt).from_config(opt.get_config())) is expected


@keras2_only
@pytest.mark.parametrize("form", ["v2", "v1"])
def test_a_subclass_of_tf24s_name_wraps_tf24s_optimizers_and_refuses_todays(by_default, form):
    """A program's own subclass of TF 2.4's class trains over TF 2.4's optimizers and comes back from its config
    as itself; given one of today's optimizers it says what to pass instead."""
    base = mp().LossScaleOptimizer if form == "v2" else mp().experimental.LossScaleOptimizer
    args = () if form == "v2" else ("dynamic",)

    class MyLSO(base):
        pass

    opt = MyLSO(tf.keras.optimizers.SGD(1.0), *args)
    assert type(opt) is MyLSO and isinstance(opt, lossscale_compat.KerasLossScaleOptimizer)
    np.testing.assert_allclose(train_one_step(opt), [-1.0, 0.0])
    assert type(MyLSO.from_config(opt.get_config())) is MyLSO
    with pytest.raises(TypeError, match=r"^MyLSO, a subclass of TF 2.4's .*tf\.keras\.optimizers\.legacy\.SGD"):
        MyLSO(tf.keras.optimizers.experimental.SGD(1.0), *args)


def wrap_tf24(form, inner):
    """TF 2.4's spelling of each loss-scale optimizer form, as legacy mode resolves it."""
    return mp().LossScaleOptimizer(inner) if form == "v2" else mp().experimental.LossScaleOptimizer(inner, "dynamic")


@keras2_only
@pytest.mark.parametrize("form", ["v2", "v1"])
def test_legacy_optimizers_in_tf24s_classes_are_tf24s_optimizer_v2(form):
    """`tf.keras.optimizers.legacy` in TF 2.4's classes (ours in legacy mode) gives TF 2.4's OptimizerV2: a schedule
    is called with a step, hyperparameters are variables, slots are read with `get_slot`, and TF1 graph mode trains
    and counts a skipped step."""
    opt = wrap_tf24(form, tf.keras.optimizers.legacy.SGD(schedule(), momentum=0.5))
    assert isinstance(opt, lossscale_compat.KerasLossScaleOptimizer)
    assert float(opt.learning_rate(5)) == float(schedule()(5))
    assert isinstance(opt.momentum, tf.Variable)
    var = tf.Variable(1.0)
    opt.minimize(lambda: var * 2.0, [var])
    assert float(opt.get_slot(var, "momentum")) == float(opt.inner_optimizer.get_slot(var, "momentum"))
    with tf.Graph().as_default():
        var, gradient = tf.compat.v1.Variable(1.0), tf.compat.v1.placeholder(tf.float32, [])
        graph_opt = wrap_tf24(form, tf.keras.optimizers.legacy.SGD(1.0))
        step = graph_opt.minimize(lambda: var * gradient, [var])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(step, {gradient: 2.0})
            assert session.run(var) < 1.0
            session.run(step, {gradient: float("inf")})
            assert session.run([graph_opt.skipped_steps, graph_opt.iterations]) == [1, 2]


class _BertAdamWeightDecay(tf.keras.optimizers.Adam):
    """Modelled on the AdamWeightDecay of BERT/ELECTRA-era trainers: clips, then hands `name` to the base class."""

    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        grads, variables = zip(*grads_and_vars)
        grads, _ = tf.clip_by_global_norm(list(grads), 1.0)
        return super().apply_gradients(zip(grads, variables), name=name, **kwargs)


@pytest.mark.parametrize("wrap", ["none", "keras", "experimental"])
def test_an_optimizer_handing_name_to_the_base_apply_gradients_trains_as_the_same_step_without_it(wrap):
    """TF 2.4's `OptimizerV2.apply_gradients` took `name` (a scope); Keras 3's does not, so in legacy mode the base
    class takes it and drops it, and the step equals the one that never passed it (TypeError before, on Keras 3)."""

    def step(optimizer, apply):
        var = tf.Variable([3.0, -4.0])
        grads = [tf.constant([30.0, -40.0])]
        apply(optimizer, grads, var)
        return var.numpy()

    def wrapped(inner):
        if wrap == "keras":
            return mp().LossScaleOptimizer(inner, dynamic=False, initial_scale=1)
        return mp().experimental.LossScaleOptimizer(inner, 1) if wrap == "experimental" else inner

    got = step(wrapped(_BertAdamWeightDecay(0.1)), lambda o, g, v: o.apply_gradients(zip(g, [v]), name="train"))
    clipped = [g * (1.0 / 50.0) for g in [tf.constant([30.0, -40.0])]]  # the global norm is 50
    want = step(tf.keras.optimizers.Adam(0.1), lambda o, g, v: o.apply_gradients(zip(clipped, [v])))
    np.testing.assert_allclose(got, want, rtol=1e-6)
