"""TF 2.4's private layer dtype attributes in legacy mode: on Keras 3, given back where TF 2.4.0's recorded value is
Keras 3's public one, else an AttributeError at first use naming the way out; on Keras 2, untouched (issue #35)."""

import json
import subprocess
import sys
import textwrap
import traceback

import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR

import layer_attribute_programs as programs
import lossscale_compat
from lossscale_compat import _flavour
from lossscale_compat._mapping import LAYER_ATTRIBUTES
from lossscale_compat.legacy._layer_attributes import TF24LayerAttributeError

GOLDEN = json.loads((GOLDEN_DIR / "tf24_layer_attributes.json").read_text())
KERAS3_LAYER = _flavour.keras3_layer_without_tf24_dtype_attributes()
keras3 = pytest.mark.skipif(KERAS3_LAYER is None, reason="Keras 2 layers have TF 2.4's attributes")
keras2 = pytest.mark.skipif(KERAS3_LAYER is not None, reason="Keras 3 layers lack TF 2.4's attributes")
GIVEN_BACK = ("_compute_dtype", "_compute_dtype_object", "_dtype_policy")
# Name -> what its error must name as the way out.
REFUSED = {
    "_autocast": "autocast=False",
    "_set_dtype_policy": "layer.dtype_policy = tf.keras.mixed_precision.Policy(name)",
    "_dtype": LAYER_ATTRIBUTES["_dtype"],
    "_maybe_cast_inputs": "tf.cast(x, layer.compute_dtype)",
}
NAMES = ("_compute_dtype", "_compute_dtype_object", "_autocast", "_set_dtype_policy", "_dtype", "_maybe_cast_inputs",
         "_dtype_policy")


def frames_outside_this_package(error):
    """The traceback's frames in installed packages (Keras's, TensorFlow's): none when we raise first."""
    return [frame.filename for frame in traceback.extract_tb(error.__traceback__) if "site-packages" in frame.filename]


@pytest.mark.parametrize("case", sorted(GOLDEN["read"]))
def test_tf24s_recorded_values_prove_the_mapping(case):
    """Each name of `_mapping.LAYER_ATTRIBUTES` held, on TF 2.4.0, the value of the public spelling it maps to."""
    recorded = GOLDEN["read"][case]
    public = {
        "layer.compute_dtype": recorded["public"]["compute_dtype"],
        "tf.as_dtype(layer.compute_dtype)": recorded["public"]["compute_dtype"],
        "layer.variable_dtype": recorded["public"]["variable_dtype"],
        "layer.dtype_policy": {"is_dtype_policy": True, "name": recorded["public"]["dtype_policy"]},
    }
    assert {name: recorded[name]["value"] for name in LAYER_ATTRIBUTES} == {
        name: public[spelling] for name, spelling in LAYER_ATTRIBUTES.items()
    }


@keras3
@pytest.mark.parametrize("case", sorted(GOLDEN["read"]))
def test_given_back_names_read_what_tf24_read(legacy_mode, case):
    build = programs.LAYERS.get(case)
    if build is None:  # the case under a global policy
        got = programs.layers_read(tf)[case]
    else:
        got = programs.read(tf, build(tf))
    expected = GOLDEN["read"][case]
    assert got["public"] == expected["public"]
    for name in GIVEN_BACK:
        assert got[name] == expected[name], name


@keras3
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_names_without_equivalent_raise_naming_the_way_out(legacy_mode, name):
    layer = tf.keras.layers.Dense(2)
    with pytest.raises(TF24LayerAttributeError) as raised:
        getattr(layer, name)
    message = str(raised.value)
    assert message.startswith(f"'Dense' object has no attribute '{name}': it is TF 2.4's")
    assert REFUSED[name] in message and "TF_USE_LEGACY_KERAS=1" in message
    assert isinstance(raised.value, AttributeError) and (raised.value.name, raised.value.obj) == (name, layer)
    assert frames_outside_this_package(raised.value) == []
    assert not hasattr(layer, name) and getattr(layer, name, "default") == "default"


@keras3
def test_autocast_is_refused_because_keras3s_flag_differs_from_tf24s(legacy_mode):
    """TF 2.4's models had `_autocast=False`; Keras 3's `autocast` is True there, so it cannot stand in for it."""
    differ = [case for case, build in sorted(programs.LAYERS.items())
              if build(tf).autocast != GOLDEN["read"][case]["_autocast"]["value"]]
    assert differ == ["functional_mixed_float16", "sequential"]


@keras3
def test_setting_autocast_in_a_tf24_layer_fails_at_its_own_line(legacy_mode):
    with pytest.raises(TF24LayerAttributeError, match="'_autocast' of a 'Identity' object cannot be set") as raised:
        programs.identity_layer(tf, autocast_off_by_attribute=True)
    first = traceback.extract_tb(raised.value.__traceback__)
    assert [frame.line for frame in first if frame.filename == programs.__file__][-1] == "self._autocast = False"


@keras3
def test_without_legacy_mode_keras3_ignores_the_autocast_flag_unlike_tf24():
    """Why the write is refused: Keras 3 silently casts the input TF 2.4 left as it was."""
    recorded = GOLDEN["autocast_attribute"]
    assert (recorded["set_false"], recorded["not_set"]) == ("float32", "float16")
    assert programs.output_dtype(tf, programs.identity_layer(tf, autocast_off_by_attribute=True)) == "float16"


@keras3
def test_keras3s_autocast_false_reads_variables_unlike_tf24_inside_a_mixed_model():
    """Why `autocast=False`, the way out, is named with its difference: inside a model TF 2.4 cast the variable."""
    recorded = GOLDEN["autocast_attribute"]["variable_dtypes_with_autocast_false"]
    got = programs.variable_dtypes_with_autocast_false(tf)
    assert got["alone"] == recorded["alone"]
    assert (got["in_model"], recorded["in_model"]) == ("float32", "float16")


@keras3
@pytest.mark.parametrize("name", ["_compute_dtype", "_compute_dtype_object", "_set_dtype_policy"])
def test_writes_without_equivalent_raise(legacy_mode, name):
    """TF 2.4 refused `_compute_dtype` too (recorded); Keras 3 would ignore the others."""
    if name == "_compute_dtype":
        assert GOLDEN["write"][name]["error"][0] == "AttributeError"
    expected = "cannot be set" if name != "_set_dtype_policy" else "has no attribute"  # a method: read, then called
    with pytest.raises(TF24LayerAttributeError, match=f"'Dense' object {expected}") as raised:
        programs.WRITES[name](tf, tf.keras.layers.Dense(2))
    assert "layer.dtype_policy = tf.keras.mixed_precision.Policy(name)" in str(raised.value)
    if name in LAYER_ATTRIBUTES:
        assert f"Its value is `{LAYER_ATTRIBUTES[name]}`" in str(raised.value)


@keras3
def test_the_way_out_of_set_dtype_policy_does_what_tf24s_did(legacy_mode):
    layer = tf.keras.layers.Dense(2)
    layer.dtype_policy = tf.keras.mixed_precision.Policy("mixed_float16")
    expected = GOLDEN["write"]["_set_dtype_policy"]
    assert {"compute_dtype": layer.compute_dtype, "output_dtype": programs.output_dtype(tf, layer)} == expected


@keras3
def test_assigning_dtype_policy_is_refused_only_where_keras3_has_none(legacy_mode):
    layer = tf.keras.layers.Dense(2)
    if KERAS3_LAYER[1]:  # Keras 3.0-3.2: `_dtype_policy` is ours, given back read-only
        with pytest.raises(TF24LayerAttributeError, match="layer.dtype_policy"):
            programs.assign_dtype_policy(tf, layer)
    else:  # Keras's own attribute, which sets the compute dtype as TF 2.4's did
        programs.assign_dtype_policy(tf, layer)
        assert layer.compute_dtype == GOLDEN["write"]["_dtype_policy"]["compute_dtype"]


@keras3
def test_a_value_the_layer_holds_itself_wins(legacy_mode):
    """Keras 3's InputLayer keeps its own `_dtype`."""
    assert tf.keras.Input((3,), dtype="float64")._keras_history[0]._dtype == "float64"


@keras3
def test_install_adds_only_these_names_and_uninstall_removes_them():
    """Nothing but these names is answered: no `__getattr__`, so every other lookup costs what it did."""
    layer_class = KERAS3_LAYER[0]
    before = dict(vars(layer_class))
    lossscale_compat.install()
    try:
        added = {name for name in vars(layer_class) if name not in before}
    finally:
        lossscale_compat.uninstall()
    expected = set(NAMES) if KERAS3_LAYER[1] else set(NAMES) - {"_dtype_policy"}
    assert added & set(NAMES) == expected
    assert not added & {"__getattr__", "__getattribute__", "__setattr__"}
    assert dict(vars(layer_class)) == before


@keras3
def test_keras_format_round_trip_is_unchanged(legacy_mode, tmp_path):
    """Keras 3 walks a layer's `dir()` when saving; the names given back are not saved."""
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, dtype="mixed_float16")])
    model.save(tmp_path / "model.keras")
    loaded = tf.keras.models.load_model(tmp_path / "model.keras")
    assert [w.name for w in loaded.weights] == [w.name for w in model.weights]
    assert all((a == b).all() for a, b in zip(loaded.get_weights(), model.get_weights()))
    assert loaded.layers[0]._compute_dtype == "float16"


@keras3
def test_tf24_program_run_in_legacy_mode_fails_at_its_own_line(tmp_path):
    """An unmodified TF 2.4 program: `_compute_dtype` reads work, `self._autocast = False` fails at its line."""
    program = tmp_path / "train.py"
    program.write_text(textwrap.dedent("""\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.set_policy("mixed_float16")

        class Scale(tf.keras.layers.Layer):
            def call(self, inputs):
                return inputs * tf.cast(2.0, self._compute_dtype)

        print("output", Scale()(tf.ones((1, 2))).dtype.name)

        class Passthrough(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self._autocast = False

            def call(self, inputs):
                return inputs

        Passthrough()
        """))
    done = subprocess.run([sys.executable, "-m", "lossscale_compat", "run", str(program)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "output float16" in done.stdout
    assert f'{program}", line 13' in done.stderr
    assert "TF24LayerAttributeError: '_autocast' of a 'Passthrough' object cannot be set" in done.stderr
    assert "autocast=False" in done.stderr


@keras2
@pytest.mark.parametrize("case", sorted(GOLDEN["read"]))
def test_on_keras2_every_name_reads_what_tf24_read(legacy_mode, case):
    build = programs.LAYERS.get(case)
    got = programs.layers_read(tf)[case] if build is None else programs.read(tf, build(tf))
    assert got == GOLDEN["read"][case]


@keras2
def test_on_keras2_writes_do_what_tf24s_did(legacy_mode):
    recorded = GOLDEN["autocast_attribute"]
    assert programs.output_dtype(tf, programs.identity_layer(tf, True)) == recorded["set_false"]
    assert programs.variable_dtypes_with_autocast_false(tf) == recorded["variable_dtypes_with_autocast_false"]
    assert programs.write(tf, programs.set_dtype_policy) == GOLDEN["write"]["_set_dtype_policy"]
    assert programs.write(tf, programs.assign_compute_dtype)["error"][0] == "AttributeError"


@keras2
def test_on_keras2_install_leaves_tf24s_layer_attributes_alone():
    layer_class = tf.keras.layers.Layer
    before = {name: vars(layer_class).get(name) for name in NAMES}
    lossscale_compat.install()
    try:
        assert {name: vars(layer_class).get(name) for name in NAMES} == before
    finally:
        lossscale_compat.uninstall()
