"""TF 2.4 programs that do what TF 2.4.0's own tests did (tests/goldens/conformance_programs.py), run unmodified in
legacy mode and compared with TF 2.4.0's own run of them (tests/goldens/conformance.json)."""

import json
import pathlib

import pytest
import tensorflow as tf

import conformance_programs  # tests/goldens/
from lossscale_compat import _flavour

GOLDENS = json.loads((pathlib.Path(conformance_programs.__file__).parent / "conformance.json").read_text())["cases"]
KERAS3 = _flavour.has_keras3_loss_scaling()

# case -> why it cannot run on Keras 3, and the way out.
KERAS3_OUT_OF_REACH = {
    "set_policy_global": "Keras 3's DTypePolicy has no '_infer' policy (TF 1's dtype inference); way out: "
    "TF_USE_LEGACY_KERAS=1 (tf_keras)",
    "keras_save_slot_variables": "Keras 3's save_weights writes only `.weights.h5` files, not TF-format checkpoint "
    "prefixes; way out: TF_USE_LEGACY_KERAS=1 (tf_keras)",
    "keras_save_model_tf": "Keras 3's model.save has no SavedModel format (`save_format='tf'`); way out: "
    "TF_USE_LEGACY_KERAS=1 (tf_keras)",
    "keras_save_model_tf_v1_lso": "Keras 3's model.save has no SavedModel format (`save_format='tf'`); way out: "
    "TF_USE_LEGACY_KERAS=1 (tf_keras)",
    "keras_save_model_h5": "Keras 3's load_model cannot read back the training config of an `.h5` it wrote "
    "(its metric names); lossscale_compat.load_tf24_h5 reads TF 2.4.0's `.h5` files; way out: TF_USE_LEGACY_KERAS=1",
    "keras_save_weights_with_dynamic_loss_scaling": "Keras 3's save_weights writes only `.weights.h5` files, not "
    "TF-format checkpoint prefixes; way out: TF_USE_LEGACY_KERAS=1 (tf_keras)",
    "policy_v1_repr": "Keras 3's DTypePolicy has no '_infer' policy and reads 'int8' as a quantization policy; "
    "way out: TF_USE_LEGACY_KERAS=1 (tf_keras)",
}


def todays_keras_format(result):
    """A layer's dtype config in TF 2.4's format: today's Keras adds `module`/`registered_name` to every
    serialized object; the rest, `class_name: 'PolicyV1'` included, is compared as is."""
    def policy(config):
        return {k: v for k, v in config.items() if k not in ("module", "registered_name")}

    if "ok" not in result:
        return result
    return {"ok": {key: policy(config) for key, config in result["ok"].items()}}


# case -> how a result in today's Keras's format is put in TF 2.4's before comparing.
NORMALISE = {"policy_v1_serialization": todays_keras_format}


# Programs that write or read a tf.train.Checkpoint of a Keras optimizer (skipped where Keras cannot: 3.0).
TF_CHECKPOINT_PROGRAMS = {"keras_restore_tf24_checkpoint_twice"}


def layers_serialize_policy_names_only():
    """Keras 3.0-3.3's layers write their dtype policy into `get_config()` as its name alone; 3.5 on, as a config."""
    config = tf.keras.layers.Dense(1, dtype=tf.keras.mixed_precision.Policy("mixed_float16")).get_config()
    return isinstance(config["dtype"], str)


def policies_refuse_non_float_dtypes():
    """Keras 3.0-3.5's DTypePolicy refuses to be built for a non-floating dtype such as complex64 (3.6 builds one);
    TF 2.4's did not."""
    try:
        tf.keras.mixed_precision.Policy("complex64")
    except ValueError:
        return True
    return False


# case -> (a feature test of the stack's own Keras, true where the case is out of reach, and why).
OUT_OF_REACH_WHERE = {
    "policy_v1_serialization": (layers_serialize_policy_names_only,
                                "this Keras's layers serialize their dtype policy as its name only (Keras 3.0-3.3), so a "
                                "TF 2.4 Policy's loss scale is not in the layer config; way out: Keras 3.6+ or tf_keras"),
    "set_policy_dtype_errors": (policies_refuse_non_float_dtypes,
                                "this Keras's DTypePolicy cannot be built for complex64 (Keras 3.0-3.5), so the error comes "
                                "at Policy() rather than at set_policy; way out: Keras 3.6+ or tf_keras"),
}


def case_params():
    params = []
    for name, (tf24_file, tf24_test, _) in sorted(conformance_programs.PROGRAMS.items()):
        marks = [pytest.mark.tf24_mirror(tf24_file, tf24_test)]
        if name in TF_CHECKPOINT_PROGRAMS:
            marks.append(pytest.mark.tf_checkpoint)
        params.append(pytest.param(name, id=name, marks=marks))
    return params


def same(ours, theirs):
    """Equal, with floats equal to float32 rounding and TF 2.4's error messages a prefix of ours."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        return ours.keys() == theirs.keys() and all(same(ours[k], theirs[k]) for k in theirs)
    if isinstance(theirs, list) and isinstance(ours, list):
        if len(theirs) == 2 and all(isinstance(x, str) for x in theirs) and len(ours) == 2:  # an error
            return ours[0] == theirs[0] and ours[1].startswith(theirs[1].split(". ")[0])
        return len(ours) == len(theirs) and all(same(o, t) for o, t in zip(ours, theirs))
    if isinstance(theirs, float) and isinstance(ours, (int, float)):
        return abs(ours - theirs) <= 1e-6 * max(1.0, abs(theirs))
    return ours == theirs


@pytest.mark.parametrize("name", case_params())
def test_program_runs_as_on_tf24(name, tmp_path):
    """The program's result in legacy mode equals TF 2.4.0's (values, or the error type and message)."""
    if KERAS3 and name in KERAS3_OUT_OF_REACH:
        pytest.skip("out of reach on Keras 3: " + KERAS3_OUT_OF_REACH[name])
    if name in OUT_OF_REACH_WHERE and OUT_OF_REACH_WHERE[name][0]():
        pytest.skip("out of reach: " + OUT_OF_REACH_WHERE[name][1])
    _, _, program = conformance_programs.PROGRAMS[name]
    ours = NORMALISE.get(name, lambda result: result)(conformance_programs.attempt(lambda: program(tf, str(tmp_path))))
    assert same(ours, GOLDENS[name]["result"]), (ours, GOLDENS[name]["result"])


def test_every_program_was_recorded_on_tf24():
    """Each program has TF 2.4.0's result, recorded for the TF 2.4 test it names."""
    assert set(GOLDENS) == set(conformance_programs.PROGRAMS)
    for name, (tf24_file, tf24_test, _) in conformance_programs.PROGRAMS.items():
        assert (GOLDENS[name]["tf24_file"], GOLDENS[name]["tf24_test"]) == (tf24_file, tf24_test)
