"""The run-time fallbacks migrated code calls (lossscale_compat._runtime) do what TF 2.4.0 did, recorded in
examples/tf24/goldens/legacy_names.json, where the modern spelling the codemod would otherwise write does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

import lossscale_compat  # noqa: E402
from lossscale_compat import _flavour  # noqa: E402
from lossscale_compat._deprecation import quiet  # noqa: E402
from lossscale_compat.legacy import _graph_rewrite  # noqa: E402

GOLDEN = json.loads(
    (Path(__file__).resolve().parents[1] / "examples" / "tf24" / "goldens" / "legacy_names.json").read_text()
)


def first_sentence(message: str) -> str:
    return message.split(". ")[0].rstrip(".:")


@pytest.fixture
def global_policy():
    """Puts the global dtype policy and the graph rewrite back as they were."""
    before = tf.keras.mixed_precision.global_policy()
    yield
    with quiet():
        _graph_rewrite.disable_mixed_precision_graph_rewrite()
    tf.keras.mixed_precision.set_global_policy(before)


def compiled_optimizer(policy) -> dict:
    """What `compile` makes of a plain SGD under `policy`, described as legacy_names.py recorded it."""
    tf.keras.mixed_precision.set_global_policy(policy)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.build((None, 2))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    optimizer = model.optimizer
    found = {"wraps": hasattr(optimizer, "inner_optimizer")}
    if found["wraps"] and hasattr(optimizer, "dynamic"):  # Keras 3's own class has no `dynamic`
        found.update(dynamic=bool(optimizer.dynamic), loss_scale=float(_flavour.current_loss_scale(optimizer)),
                     growth_steps=optimizer.dynamic_growth_steps if optimizer.dynamic else None)
    return found


POLICIES = {
    "Policy(mixed_float16)": lambda: lossscale_compat.Policy("mixed_float16"),
    "Policy(mixed_float16, 128)": lambda: lossscale_compat.Policy("mixed_float16", loss_scale=128),
    "Policy(mixed_float16, DynamicLossScale(64, 10))": lambda: lossscale_compat.Policy(
        "mixed_float16", loss_scale=lossscale_compat.DynamicLossScale(64, 10)),
    "Policy(mixed_float16, None)": lambda: lossscale_compat.Policy("mixed_float16", loss_scale=None),
    "Policy(float32, 8)": lambda: lossscale_compat.Policy("float32", loss_scale=8),
}


@pytest.mark.parametrize("label", POLICIES)
def test_policy_loss_scale_reaches_compile_as_on_tf24(label, global_policy):
    """Should wrap (or not) the compiled optimizer exactly as TF 2.4.0's compile did under that Policy."""
    assert compiled_optimizer(POLICIES[label]()) == GOLDEN[f"compile under {label}"]["ok"]


def test_modern_policy_without_a_loss_scale_still_wraps_where_tf24_did_not(global_policy):
    """Before: the modern policy the codemod writes for `Policy('mixed_float16', loss_scale=None)` loses TF 2.4's
    'no loss scaling' (the reason the fallback exists); models under it keep the stack's own rule."""
    assert GOLDEN["compile under Policy(mixed_float16, None)"]["ok"] == {"wraps": False}
    lossscale_compat.Policy("float32")  # the TF 2.4 rule is installed; it must not reach modern policies
    assert compiled_optimizer(_flavour.keras_policy_class()("mixed_float16"))["wraps"] is True


def test_policy_carries_its_loss_scale_like_tf24():
    """`policy.loss_scale` (read by the guide's print) and the config are TF 2.4's."""
    for label, args in [("policy mixed_float16, 128", ("mixed_float16", 128)),
                        ("policy mixed_float16, None", ("mixed_float16", None))]:
        want = GOLDEN[label]["ok"]
        policy = lossscale_compat.Policy(*args)
        assert policy.get_config() == want["config"]
        got = None if policy.loss_scale is None else policy.loss_scale.get_config()
        assert got == want["loss_scale_config"]


def test_graph_rewrite_of_a_keras_optimizer_wraps_as_on_tf24(global_policy):
    want = GOLDEN["graph rewrite of SGD"]
    rewritten = lossscale_compat.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1), loss_scale=128)
    assert {"wraps": type(rewritten.inner_optimizer).__name__, "dynamic": bool(rewritten.dynamic),
            "loss_scale": float(_flavour.current_loss_scale(rewritten))} == want
    with quiet():
        _graph_rewrite.disable_mixed_precision_graph_rewrite()
    default = lossscale_compat.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1))
    assert {"dynamic": bool(default.dynamic), "loss_scale": float(_flavour.current_loss_scale(default))} == GOLDEN[
        "graph rewrite default"]


def test_graph_rewrite_of_a_tf1_optimizer_uses_tf1s_rewrite(global_policy):
    """Decided when called: a `tf.compat.v1.train.Optimizer` gets TF1's own rewrite (its loss-scale optimizer)."""
    with tf.Graph().as_default():
        opt = lossscale_compat.enable_mixed_precision_graph_rewrite(tf.compat.v1.train.GradientDescentOptimizer(0.1))
        assert isinstance(opt, tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer)
        tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()


@pytest.mark.parametrize("label, call", [
    ("graph rewrite of a non-optimizer", lambda: lossscale_compat.enable_mixed_precision_graph_rewrite(3)),
    ("graph rewrite under a mixed policy", lambda: (
        tf.keras.mixed_precision.set_global_policy("mixed_float16"),
        lossscale_compat.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1)))),
])
def test_graph_rewrite_refuses_what_tf24_refused(label, call, global_policy):
    want = GOLDEN[label]
    with pytest.raises(ValueError) as raised:
        call()
    assert want["error"] == "ValueError"
    assert first_sentence(str(raised.value)) == first_sentence(want["message"])


def test_modern_name_for_the_graph_rewrite_is_gone():
    """Before: the name a TF 2.4 file calls no longer exists on today's TensorFlow (so the fallback is needed)."""
    assert not hasattr(tf.train.experimental, "enable_mixed_precision_graph_rewrite")


def test_any_loss_scale_optimizer_answers_isinstance_for_every_loss_scale_optimizer():
    sgd = tf.keras.optimizers.SGD(0.1)
    for optimizer in (_flavour.keras_loss_scale_optimizer()(tf.keras.optimizers.SGD(0.1)),
                      lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1)),
                      lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), "dynamic")):
        assert isinstance(optimizer, lossscale_compat.AnyLossScaleOptimizer), type(optimizer)
        assert isinstance(optimizer, (int, lossscale_compat.AnyLossScaleOptimizer))
        assert issubclass(type(optimizer), lossscale_compat.AnyLossScaleOptimizer)
    assert not isinstance(sgd, lossscale_compat.AnyLossScaleOptimizer)
    assert not isinstance(3, lossscale_compat.AnyLossScaleOptimizer)
    with pytest.raises(TypeError, match="only for isinstance"):
        lossscale_compat.AnyLossScaleOptimizer(sgd)


def _every_loss_scale_optimizer():
    """One of each loss-scale optimizer a migrated program can hold on this stack: the target's own and
    lossscale_compat's, over a current optimizer and (Keras 2) a legacy one, and `compile`'s under our Policy."""
    inner = [tf.keras.optimizers.SGD]
    legacy = getattr(tf.keras.optimizers, "legacy", None)
    if legacy is not None and not _flavour.has_keras3_loss_scaling():
        inner.append(legacy.SGD)
    for make in inner:
        yield _flavour.keras_loss_scale_optimizer()(make(0.1))
        yield lossscale_compat.KerasLossScaleOptimizer(make(0.1))
        yield lossscale_compat.LossScaleOptimizer(make(0.1), "dynamic")
        yield lossscale_compat.LossScaleOptimizer(make(0.1), 8)
    with quiet():
        tf.keras.mixed_precision.set_global_policy(lossscale_compat.Policy("mixed_float16", loss_scale=128))
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    yield model.optimizer


def test_the_targets_class_answers_isinstance_as_any_loss_scale_optimizer(global_policy):
    """Why the codemod checks the target's class where TF 2.4 checked the experimental one (LSC136): every loss-scale
    optimizer of today's stack, lossscale_compat's included, is an instance of it, as of AnyLossScaleOptimizer."""
    target = _flavour.keras_loss_scale_optimizer()
    found = list(_every_loss_scale_optimizer())
    assert any(type(optimizer).__module__.startswith("lossscale_compat") for optimizer in found)
    for optimizer in found:
        assert isinstance(optimizer, lossscale_compat.AnyLossScaleOptimizer), type(optimizer)
        assert isinstance(optimizer, target), type(optimizer)
        assert issubclass(type(optimizer), target), type(optimizer)
    assert not isinstance(tf.keras.optimizers.SGD(0.1), target)


def test_keras_experimental_module_resolves_tf24s_names(global_policy):
    """A leftover `mixed_precision.` alias resolves every name of TF 2.4's module, with TF 2.4's behaviour."""
    mixed_precision = lossscale_compat.keras_experimental
    assert set(GOLDEN["spellings"]) >= {f"tf.keras.mixed_precision.experimental.{name}" for name in (
        "LossScaleOptimizer", "Policy", "set_policy", "global_policy", "get_layer_policy")}
    policy = mixed_precision.Policy("mixed_float16", loss_scale=256)
    with pytest.warns(lossscale_compat.LossScaleDeprecationWarning):
        mixed_precision.set_policy(policy)
    with pytest.warns(lossscale_compat.LossScaleDeprecationWarning):
        assert repr(mixed_precision.global_policy()) == GOLDEN["global policy after set_policy(Policy)"]["ok"]
    optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), loss_scale=64)
    assert isinstance(optimizer, lossscale_compat.AnyLossScaleOptimizer)
    with pytest.raises(AttributeError):
        mixed_precision.DynamicLossScale  # noqa: B018 - TF 2.4's Keras module had no such name either


@pytest.mark.parametrize("make", [lambda: lossscale_compat.DynamicLossScale(64, 10, 4),
                                  lambda: type("Halving", (lossscale_compat.FixedLossScale,), {})(8)])
def test_graph_rewrite_of_a_tf1_optimizer_keeps_lossscale_compats_loss_scale_object(make, global_policy):
    """A migrated file builds lossscale_compat's loss scale; TF1's rewrite takes only TensorFlow's, so the fallback
    wraps in legacy mode's subclass of TF1's optimizer, which keeps and updates the very object, as TF 2.4 did."""
    with tf.Graph().as_default():
        loss_scale = make()
        opt = lossscale_compat.enable_mixed_precision_graph_rewrite(tf.compat.v1.train.GradientDescentOptimizer(0.1),
                                                                    loss_scale)
        assert isinstance(opt, tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer)
        assert opt._loss_scale is loss_scale  # TF1's optimizer keeps its loss scale here
        tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()


def test_graph_rewrite_of_a_keras_optimizer_takes_tensorflows_loss_scale(global_policy):
    """A loss scale kept on TensorFlow's class for an optimizer of unknown kind works for a Keras one too."""
    rewritten = lossscale_compat.enable_mixed_precision_graph_rewrite(
        tf.keras.optimizers.SGD(0.1), tf.compat.v1.mixed_precision.FixedLossScale(128))
    assert GOLDEN["graph rewrite of SGD"] == {
        "wraps": type(rewritten.inner_optimizer).__name__, "dynamic": bool(rewritten.dynamic),
        "loss_scale": float(_flavour.current_loss_scale(rewritten))}


def test_disable_graph_rewrite_turns_it_off_as_tf24s_did(global_policy):
    """What a file that uses TF2's `disable_...` as a value calls: the policy may be mixed again afterwards."""
    lossscale_compat.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1))
    assert tf.config.optimizer.get_experimental_options().get("auto_mixed_precision") is True
    assert lossscale_compat.disable_mixed_precision_graph_rewrite() is None
    assert tf.config.optimizer.get_experimental_options().get("auto_mixed_precision") is False
    tf.keras.mixed_precision.set_global_policy("mixed_float16")  # TF 2.4 refused this while the rewrite was on


def test_get_layer_policy_as_a_value_is_tf24s(global_policy):
    """Recorded by legacy_names.py after `set_policy(Policy("mixed_float16", loss_scale=256))`."""
    tf.keras.mixed_precision.set_global_policy(lossscale_compat.Policy("mixed_float16", loss_scale=256))
    layer = tf.keras.layers.Dense(2)
    get_layer_policy = lossscale_compat.keras_experimental.get_layer_policy
    with pytest.warns(lossscale_compat.LossScaleDeprecationWarning):
        assert repr(get_layer_policy(layer)) == GOLDEN["get_layer_policy of a new layer"]["ok"]
    want = GOLDEN["get_layer_policy of a non-layer"]
    with pytest.warns(lossscale_compat.LossScaleDeprecationWarning), pytest.raises(ValueError) as raised:
        get_layer_policy(3)
    assert want["error"] == "ValueError" and first_sentence(str(raised.value)) == first_sentence(want["message"])


@pytest.mark.parametrize("hook", ["runtime Policy", "legacy mode"])
def test_a_saved_model_loads_with_its_optimizer_after_the_compile_rule_is_installed(hook, tmp_path):
    """The compile rule is set where Keras defines the method: Keras 3 loads a model whose class overrides `compile`
    without compiling it, so every `.keras` file lost its optimizer once a TF 2.4 Policy had been built."""
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    saved = tmp_path / "model.keras"
    model.save(saved)
    if hook == "legacy mode":
        lossscale_compat.install()
    try:
        lossscale_compat.Policy("float32")
        restored = tf.keras.models.load_model(saved)
        assert getattr(restored, "optimizer", None) is not None
        assert type(restored.optimizer).__name__ == "SGD"
    finally:
        if hook == "legacy mode":
            lossscale_compat.uninstall()
