"""Constructor and strategy errors of both optimizer forms: TF 2.4.0's exception types and messages."""

import builtins
import re
import warnings

import pytest
import tensorflow as tf
from tf24_goldens import OPTIMIZER_GOLDENS, keras3, normalise_addresses, our_class, specs

import lossscale_compat
from lossscale_compat import KerasLossScaleOptimizer, LossScaleOptimizer, _flavour

ERRORS = OPTIMIZER_GOLDENS["errors"]
CONSTRUCTORS = ERRORS["constructors"]
STRATEGIES = {case["name"]: case for case in ERRORS["strategies"]}

# TF 2.4's messages name OptimizerV2, which no longer exists; ours names the stack's optimizer base
# class instead. What they mean is carried by the text around that name, which is asserted.
OPTIMIZER_V2 = "OptimizerV2"


# The recorder's LossScale subclass that is neither fixed nor dynamic, on our LossScale.
CustomLossScale = specs.custom_loss_scale_class(tf, lossscale_compat.LossScale, __name__)


def inner(spec):
    """The recorder's `error_inner`, with our classes."""
    return {
        "SGD": lambda: tf.keras.optimizers.SGD(),
        "v1.train.GradientDescentOptimizer": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
        "LSO(SGD())": lambda: KerasLossScaleOptimizer(tf.keras.optimizers.SGD()),
        "V1(SGD(), 'dynamic')": lambda: LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic"),
        "str:foo": lambda: "foo",
        "None": lambda: None,
    }[spec]()


def argument(spec):
    """The recorder's `error_arg`, with our loss-scale classes."""
    if spec["py"] == "CustomLossScale":
        return CustomLossScale()
    return specs.value(spec, lossscale_compat.FixedLossScale, lossscale_compat.DynamicLossScale)


def check_error(expected, raised):
    """TF 2.4.0's exception type (ours may subclass it), and its message (or what it means) within ours."""
    assert isinstance(raised.value, getattr(builtins, expected["type"]))
    message = normalise_addresses(str(raised.value))
    # The recorder defined CustomLossScale in __main__; here it lives in this module.
    tf24 = expected["message"].rstrip(".").replace("<__main__.", f"<{__name__}.")
    if OPTIMIZER_V2 in tf24:
        for fragment in tf24.split(OPTIMIZER_V2):
            assert fragment.strip(" .") in message
    elif "__init__() missing" in tf24:  # Python >= 3.10 qualifies it: "LossScaleOptimizer.__init__() missing"
        assert tf24 in message
    elif "_hyper" in tf24:
        # TF 2.4 failed reading OptimizerV2's private `_hyper` of the wrapped LSO; the meaning left is that
        # a LossScaleOptimizer cannot be wrapped.
        assert "LossScaleOptimizer" in message
    elif "Trackable._track_trackable()" in tf24:
        # TF 2.4's Trackable said a second 'loss_scale'/'base_optimizer' dependency was declared on the same
        # inner optimizer; the meaning left is that the inner optimizer is already wrapped.
        assert "already" in message
    else:
        assert tf24 in message





def constructor_params():
    params = []
    for case in CONSTRUCTORS:
        # TF 2.4 truncated a fractional growth_steps silently; ours also warns (tested below).
        marks = [pytest.mark.filterwarnings("ignore:dynamic_growth_steps=.* is not a whole number:UserWarning")]
        params.append(pytest.param(case, marks=marks, id=case["name"]))
    return params


def construct(case):
    cls = our_class(case["class"])
    if case["name"].startswith("v2_wrap_same_inner_twice"):
        optimizer = tf.keras.optimizers.SGD()
        kwargs = dict(case["kwargs"])  # the recorder stored these plainly, not as argument specs
        cls(optimizer, **kwargs)
        return cls(optimizer, **kwargs)
    return cls(inner(case["inner"]), *[argument(a) for a in case["args"]],
               **{key: argument(spec) for key, spec in case["kwargs"].items()})


@pytest.mark.parametrize("case", constructor_params())
def test_constructor_matches_tf24(case):
    """Each constructor call TF 2.4.0 refused is refused alike; the ones it accepted are accepted alike.
    Mirrors TF 2.4's loss_scale_optimizer_test.py: testPassingV1LossScaleErrors; testInvalidArgsWithFixedLossScale;
    testDynamicMustBeBool."""
    expected = case["result"]
    if "error" in expected:
        with pytest.raises(Exception) as raised:
            construct(case)
        check_error(expected["error"], raised)
        return
    with warnings.catch_warnings():  # that warning is tested in tests/loss_scale/test_tf24_bad_scales.py
        warnings.filterwarnings("ignore", "LossScaleOptimizer.*not a positive finite number", UserWarning)
        optimizer = construct(case)
    if expected == {"ok": True}:
        return
    expected = expected["ok"]
    assert type(optimizer) is our_class(expected["class"])
    assert optimizer.dynamic is expected["dynamic"]
    assert optimizer.initial_scale == expected["initial_scale"]
    assert float(optimizer.loss_scale) == expected["loss_scale"]
    assert optimizer.dynamic_growth_steps == expected["dynamic_growth_steps"]


# --- strategies ---------------------------------------------------------------------------------------

def construct_default(form):
    """The recorder's default construction of either form: "v2" (non-experimental) or "v1" (experimental)."""
    if form == "v2":
        return KerasLossScaleOptimizer(tf.keras.optimizers.SGD())
    return LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")


def central_storage():
    return tf.distribute.experimental.CentralStorageStrategy(compute_devices=["/cpu:0", "/cpu:1"],
                                                             parameter_device="/cpu:0")


@pytest.mark.strategy
@pytest.mark.parametrize("form", ["v2", "v1"])
def test_construct_in_central_storage_scope_is_refused(form):
    """Constructing either form inside CentralStorageStrategy raises TF 2.4's ValueError."""
    expected = STRATEGIES["central_storage_construct_in_scope"][form]["error"]
    with central_storage().scope():
        with pytest.raises(Exception) as raised:
            construct_default(form)
    check_error(expected, raised)


@pytest.mark.strategy
def test_minimize_in_central_storage_is_refused():
    """An LSO built outside CentralStorageStrategy refuses to step inside it, as in TF 2.4."""
    expected = STRATEGIES["central_storage_built_outside_minimize_inside"]["v2"]["error"]
    optimizer = KerasLossScaleOptimizer(tf.keras.optimizers.SGD(1.0))
    strategy = central_storage()
    with strategy.scope():
        var = tf.Variable(1.0)
        with pytest.raises(Exception) as raised:
            strategy.run(lambda: optimizer.minimize(lambda: var * 2.0, [var]))
    check_error(expected, raised)


@pytest.mark.strategy
def test_apply_gradients_in_cross_replica_context_is_refused():
    """apply_gradients under MirroredStrategy but outside `run` raises TF 2.4's ValueError."""
    expected = STRATEGIES["mirrored_apply_gradients_cross_replica"]["v2"]["error"]
    with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
        var = tf.Variable(1.0)
        optimizer = KerasLossScaleOptimizer(tf.keras.optimizers.SGD(1.0))
        with pytest.raises(Exception) as raised:
            optimizer.apply_gradients([(tf.constant(1.0), var)])
    check_error(expected, raised)


@pytest.mark.parametrize("form", ["v2", "v1"])
def test_tpu_strategy_is_refused_with_bfloat16_advice(form, monkeypatch):
    """Under TPUStrategy both forms raise TF 2.4.0's ValueError, which says to use bfloat16 instead.

    There is no TPU here, so the strategy is an uninitialised TPUStrategy that only answers `isinstance`,
    as it was when TF 2.4.0's message was recorded.
    """
    expected = STRATEGIES["tpu_stand_in_construct"][form]["error"]
    tpu = object.__new__(tf.distribute.TPUStrategy)
    for module in {tf.distribute, tf.compat.v2.distribute}:  # Keras 2 reads the strategy through the latter
        monkeypatch.setattr(module, "has_strategy", lambda: True)
        monkeypatch.setattr(module, "get_strategy", lambda: tpu)
    with pytest.raises(Exception) as raised:
        construct_default(form)
    check_error(expected, raised)


@pytest.mark.parametrize("cls", [LossScaleOptimizer, KerasLossScaleOptimizer])
@pytest.mark.parametrize("config", [{}, {"dynamic": True}, ["SGD"]])
def test_from_config_without_an_inner_optimizer_says_what_it_needs(cls, config):
    with pytest.raises(ValueError, match=r"A LossScaleOptimizer config needs `inner_optimizer` \(TF 2.4, Keras 3\)") as caught:
        cls.from_config(config)
    assert isinstance(caught.value, KeyError)  # what TF 2.4 raised, for code that caught it
    assert "Pass what the optimizer's `get_config()` returned." in str(caught.value)


def test_from_config_with_a_setting_the_inner_optimizer_does_not_take_names_it():
    config = KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1)).get_config()
    config["inner_optimizer"]["config"]["bogus"] = 1
    with pytest.raises(ValueError, match=r"Cannot load this SGD config: .*bogus") as caught:
        KerasLossScaleOptimizer.from_config(config)
    assert "Unknown optimizer" not in str(caught.value)


def test_from_config_with_an_inner_config_without_class_name_says_what_it_needs():
    with pytest.raises(ValueError, match=r"An inner optimizer config needs `class_name` and `config`"):
        KerasLossScaleOptimizer.from_config({"inner_optimizer": {"learning_rate": 0.1}})


@pytest.mark.skipif(_flavour.keras_optimizers_are_trackable(),
                    reason="this Keras's optimizers are TensorFlow trackables (Keras 2, Keras 3.1+): checkpoints work")
@pytest.mark.parametrize("make", [lambda: lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(1.0)),
                                  lambda: lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), "dynamic")],
                         ids=["LSO", "V1"])
def test_a_tf_checkpoint_where_keras_optimizers_are_not_trackable_is_a_clear_error(make, tmp_path):
    """On Keras 3.0 saving or restoring ours in a TF checkpoint raises a ValueError naming the release and the way out."""
    optimizer, variable = make(), tf.Variable([1.0])
    optimizer.minimize(lambda: variable * 1.0, [variable])
    expected = rf"checkpoint on Keras {re.escape(_flavour.keras_version())}: .*keras>=3\.1.*TF_USE_LEGACY_KERAS=1"
    with pytest.raises(ValueError, match=expected):
        tf.train.Checkpoint(optimizer=optimizer).write(str(tmp_path / "ckpt"))
    optimizer_entry = tf.train.Checkpoint(iter=tf.Variable(3, dtype=tf.int64))  # as an older stack wrote it
    prefix = tf.train.Checkpoint(optimizer=optimizer_entry).write(str(tmp_path / "older"))
    with pytest.raises(ValueError, match=expected):
        tf.train.Checkpoint(optimizer=optimizer).restore(prefix)


@pytest.mark.parametrize("kwargs, error, says", [
    ({"initial_scale": "x"}, ValueError, '"initial_scale" must be a number'),
    ({"initial_scale": [1.0]}, TypeError, '"initial_scale" must be a number'),
    ({"dynamic_growth_steps": "3.5"}, ValueError, '"dynamic_growth_steps" must be a whole number'),
    ({"dynamic_growth_steps": [1]}, TypeError, '"dynamic_growth_steps" must be a whole number'),
])
def test_a_scale_argument_that_is_not_a_number_says_what_it_must_be(kwargs, error, says):
    """TF 2.4's exception type (float()/int() raised it), with a message that names the argument."""
    with pytest.raises(error, match=re.escape(says)):
        KerasLossScaleOptimizer(tf.keras.optimizers.SGD(), **kwargs)


def test_a_fractional_growth_steps_is_truncated_as_on_tf24_with_a_warning():
    with pytest.warns(UserWarning, match=r"dynamic_growth_steps=1\.5 is not a whole number.*used as 1"):
        optimizer = KerasLossScaleOptimizer(tf.keras.optimizers.SGD(), dynamic_growth_steps=1.5)
    tf24 = next(case for case in CONSTRUCTORS if case["name"] == "v2_growth_steps_fractional")["result"]["ok"]
    assert optimizer.dynamic_growth_steps == tf24["dynamic_growth_steps"]
