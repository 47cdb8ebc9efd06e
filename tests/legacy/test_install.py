"""install()/uninstall(): TF 2.4's names come and go, TensorFlow is left exactly as it was, `keras` is untouched."""

import importlib
import json
import pathlib
import sys
import warnings

import numpy as np
import pytest
import tensorflow as tf

import lossscale_compat
from lossscale_compat import _flavour, _mapping
from lossscale_compat.legacy import _namespaces


def places():
    """Every (object, name) legacy mode assigns to on this stack."""
    graph_model = _flavour.keras2_graph_model()
    return [(target, name) for target, name, _ in _namespaces.assignments(tf)] + [_flavour.keras_compile_hook()] + (
        [] if graph_model is None else [(graph_model, "_set_optimizer")])


def snapshot(places):
    """Identity of what stands at each place, and of the import and warning machinery."""
    state = {}
    for target, name in places:
        if target is sys.modules:
            state[("sys.modules", name)] = sys.modules.get(name)
        else:
            state[(id(target), name)] = target.__dict__.get(name)
    return state, list(sys.meta_path), list(warnings.filters)


@pytest.fixture
def legacy_mode():
    lossscale_compat.install()
    yield
    lossscale_compat.uninstall()


def test_uninstall_restores_tensorflow_exactly_and_both_are_idempotent():
    where = places()
    before = snapshot(where)
    lossscale_compat.install()
    lossscale_compat.install()
    during = snapshot(where)
    assert during[0] != before[0]
    assert tf.mixed_precision.experimental.DynamicLossScale is lossscale_compat.DynamicLossScale
    lossscale_compat.uninstall()
    lossscale_compat.uninstall()
    after = snapshot(where)
    changed = [place for place, value in before[0].items() if after[0][place] is not value]
    assert changed == []
    assert after[1] == before[1] and after[2] == before[2]
    assert "tensorflow.keras.mixed_precision.experimental" not in sys.modules
    with pytest.raises(AttributeError):
        tf.keras.mixed_precision.experimental  # noqa: B018


def test_names_resolve_to_our_classes(legacy_mode):
    from tensorflow.keras.mixed_precision import experimental as mixed_precision

    if _flavour.tf24_optimizers_in_effect():  # Keras 2: the forms over TF 2.4's OptimizerV2, with TF 2.4's names
        tf24_class = _flavour.keras2_loss_scale_optimizer_for_legacy_optimizers()
        assert issubclass(mixed_precision.LossScaleOptimizer, tf24_class)
        assert issubclass(mixed_precision.LossScaleOptimizer, tf.keras.mixed_precision.LossScaleOptimizer)
        assert mixed_precision.LossScaleOptimizer.__name__ == "LossScaleOptimizerV1"
        assert issubclass(tf.keras.mixed_precision.LossScaleOptimizer, tf24_class)
        assert tf.keras.mixed_precision.LossScaleOptimizer.__name__ == "LossScaleOptimizer"
    else:
        assert mixed_precision.LossScaleOptimizer is lossscale_compat.LossScaleOptimizer
        assert tf.keras.mixed_precision.LossScaleOptimizer is lossscale_compat.KerasLossScaleOptimizer
    assert tf.train.experimental.FixedLossScale is lossscale_compat.FixedLossScale
    # Today's names in the same namespaces still resolve to the stack's own.
    assert tf.keras.mixed_precision.global_policy is _flavour_global_policy()
    assert tf.train.experimental.PythonState is not None


def _flavour_global_policy():
    from lossscale_compat.legacy._policy import tf_keras_mixed_precision

    return tf_keras_mixed_precision().global_policy


@pytest.mark.skipif(not _flavour.has_keras3_loss_scaling(), reason="`import keras` is Keras 3 only on this stack")
def test_modern_keras_code_keeps_keras3s_own_classes_and_algorithm(legacy_mode):
    """A library that imports keras directly builds Keras 3's LossScaleOptimizer and trains with its contract."""
    import keras

    assert keras.mixed_precision.LossScaleOptimizer is _flavour.keras_loss_scale_optimizer()
    assert not hasattr(keras.mixed_precision, "experimental")
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.5), initial_scale=8.0)
    variable = keras.Variable(np.float32(1.0))
    # Keras 3.0-3.6's own class never advances its `iterations`; its inner optimizer's counts the steps.
    counter = optimizer.inner_optimizer if _flavour.iterations_never_advance(optimizer) else optimizer
    iterations = []
    for gradient in (1.0, np.inf, 1.0):
        scaled = optimizer.scale_loss(tf.constant(1.0))
        optimizer.apply_gradients([(tf.constant(np.float32(gradient)) * scaled, variable)])
        iterations.append(int(counter.iterations.numpy()))
    # Keras 3's own algorithm: the skipped step does not advance `iterations` (TF 2.4's did).
    assert iterations == [1, 1, 2]
    assert float(variable.numpy()) == pytest.approx(0.0)


def test_compile_wraps_by_tf24s_rule_and_uninstall_restores_the_stacks():
    """Under a TF 2.4 Policy with a fixed loss scale, compile wraps in ours; after uninstall, the stack decides."""
    mixed_precision = None
    lossscale_compat.install()
    try:
        mixed_precision = tf.keras.mixed_precision.experimental
        mixed_precision.set_policy(mixed_precision.Policy("mixed_float16", loss_scale=128))
        model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        assert isinstance(model.optimizer, lossscale_compat.KerasLossScaleOptimizer)
        assert (model.optimizer.dynamic, float(model.optimizer.loss_scale)) == (False, 128.0)
    finally:
        if mixed_precision is not None:
            mixed_precision.set_policy("float32")
        lossscale_compat.uninstall()
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        assert not isinstance(model.optimizer, lossscale_compat.KerasLossScaleOptimizer)
        assert isinstance(model.optimizer, _flavour.keras_loss_scale_optimizer())
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


@pytest.mark.skipif(not _flavour.has_keras3_loss_scaling(), reason="auto_scale_loss is Keras 3's compile argument")
def test_keras3_code_that_passes_auto_scale_loss_keeps_keras3s_wrapping(legacy_mode):
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", auto_scale_loss=True)
        assert type(model.optimizer) is _flavour.keras_loss_scale_optimizer()
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


def test_the_graph_rewrite_wraps_and_says_once_that_no_gpu_means_no_rewrite(legacy_mode, caplog, monkeypatch):
    from lossscale_compat.legacy import _graph_rewrite

    monkeypatch.setattr(_graph_rewrite, "_said_no_gpu", False)
    try:
        with caplog.at_level("WARNING", logger="lossscale_compat"):
            first = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1), 64)
            tf.train.experimental.disable_mixed_precision_graph_rewrite()
            tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1))
    finally:
        tf.train.experimental.disable_mixed_precision_graph_rewrite()
    assert isinstance(first, lossscale_compat.LossScaleOptimizer)
    assert (first.dynamic, float(first.loss_scale)) == (False, 64.0)
    said = [r.getMessage() for r in caplog.records if r.name == "lossscale_compat"]
    assert len(said) == 1 and "no GPU is visible" in said[0]
    assert tf.config.optimizer.get_experimental_options().get("auto_mixed_precision") is False


# Which names TF 2.4.0 and TF 2.3.0 resolved, by import and by attribute: tests/recorders/record_tf24_names.py.
TF_NAMES = json.loads((pathlib.Path(__file__).resolve().parents[1] / "goldens" / "tf24_names.json").read_text())
RECORDED_VERSIONS = ("2.4.0", "2.3.0")  # TF 2.4.0 first; TF 2.3.0 for the names only TF <= 2.3 had
OLD_NAMES = [row.old for row in _mapping.RENAMES]
MODULES = sorted({old.rsplit(".", 1)[0] for old in OLD_NAMES})


def _by_attributes(dotted):
    """`tf.a.b.Name`, as TF 2.4 code spells it after `import tensorflow as tf`."""
    value = tf
    for name in dotted.split(".")[1:]:
        value = getattr(value, name)
    return value


def _by_import(dotted):
    """`from a.b import Name`."""
    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _recorded(section, key, resolved):
    """TF 2.4.0's recording of `key`, or TF 2.3.0's if only TF <= 2.3 resolved it, with that version."""
    for version in RECORDED_VERSIONS:
        if key not in TF_NAMES[version][section]:
            pytest.fail(f"{key} has no recording: re-record with tests/recorders/record_tf24_names.py on TF {version}")
        if resolved(TF_NAMES[version][section][key]):
            return version, TF_NAMES[version][section][key]
    pytest.fail(f"{key} resolved on neither TF 2.4.0 nor TF 2.3.0: the mapping holds a name that never existed")


def test_the_names_golden_covers_every_row_of_the_mapping():
    for version in RECORDED_VERSIONS:
        missing = [old for old in OLD_NAMES if old not in TF_NAMES[version]["names"]]
        assert missing == [], f"re-record with tests/recorders/record_tf24_names.py on TF {version}: {missing}"
        assert sorted(TF_NAMES[version]["modules"]) == MODULES


@pytest.mark.parametrize("old", OLD_NAMES, ids=OLD_NAMES)
def test_every_tf24_name_of_the_mapping_resolves_in_legacy_mode_as_tf_resolved_it(legacy_mode, old):
    """The codemod's table and legacy mode cover the same TF 2.4 names, each by `import` and by attribute where
    TF 2.4.0 (for TF <= 2.3's private modules, TF 2.3.0) resolved it so."""
    version, recorded = _recorded("names", old, lambda entry: entry["by_import"] or entry["by_attribute"])
    imported = None
    if recorded["by_import"]:
        imported = _by_import(old)
        assert callable(imported)
    dropped = TF_NAMES["2.4.0"]["names"][old].get("attribute_missing")
    if version != "2.4.0" and dropped is not None and dropped.count(".") == 1:
        # TF 2.4.0 itself dropped the top-level namespace (`tf.python`): legacy mode runs TF 2.4's spellings
        # and does not bring it back, so the name is reached by import only, as on TF 2.4.0.
        with pytest.raises(AttributeError):
            _by_attributes(dropped)
    elif recorded["by_attribute"]:
        by_attribute = _by_attributes(old)
        assert callable(by_attribute)
        if recorded["same_object"]:
            assert by_attribute is imported


@pytest.mark.parametrize("module", MODULES)
def test_every_module_of_the_mapping_imports_in_legacy_mode(legacy_mode, module):
    """`import <module>` works for every module that TF 2.4.0 (or, for TF <= 2.3's private ones, TF 2.3.0) had."""
    _recorded("modules", module, lambda entry: entry["importable"])
    importlib.import_module(module)


def test_an_install_that_fails_midway_leaves_tensorflow_as_it_was(monkeypatch):
    """All or nothing: a failure inside install (here: a gate raising after earlier patches) undoes them all."""
    from lossscale_compat import legacy

    lossscale_compat.uninstall()
    model, method = _flavour.keras_compile_hook()
    before = vars(model).get(method)

    def broken():
        raise RuntimeError("a gate failed")

    monkeypatch.setattr(_flavour, "keras_load_weights_without_tf_checkpoints", broken)  # among the last patches
    with pytest.raises(RuntimeError, match="a gate failed"):
        lossscale_compat.install()
    assert not legacy.is_installed()
    assert vars(model).get(method) is before  # the compile hook, patched early, is undone
