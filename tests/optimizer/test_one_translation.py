"""The shim, the codemod and the messages translate every TF 2.4 loss-scale form in the goldens alike.

Each golden form is a TF 2.4 `LossScaleOptimizer(opt, loss_scale)` whose config TF 2.4.0 recorded. The three
readings are held to that config: the shim's keyword arguments, the arguments the codemod writes into the
migrated source, and the construction a deprecation message names.
"""

import ast
import re

import pytest
from tf24_optimizers import OPTIMIZER_GOLDENS, specs

import lossscale_compat
from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._engine import migrate_source
from lossscale_compat import _conversions, _mapping

FORMS = [case for case in OPTIMIZER_GOLDENS["configs"]["forms"] if case["form"]["class"] == "experimental"]
REFUSED = [case for case in OPTIMIZER_GOLDENS["errors"]["constructors"] if "multiplier_4" in case["name"]]
EXPERIMENTAL = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"


def tf24_arguments(config):
    """The three settings of a TF 2.4 optimizer config that a loss scale decides."""
    return {key: config[key] for key in ("dynamic", "initial_scale", "dynamic_growth_steps")}


def completed(kwargs):
    """TF 2.4 non-experimental keyword arguments with TF 2.4's defaults filled in, as its config showed them."""
    dynamic = kwargs.get("dynamic", True)
    return {
        "dynamic": dynamic,
        "initial_scale": float(kwargs.get("initial_scale", 2**15)),
        "dynamic_growth_steps": int(kwargs.get("dynamic_growth_steps", 2000)) if dynamic else None,
    }


def source_of(spec):
    """TF 2.4 source text for a golden loss-scale argument."""
    if spec["py"] in ("FixedLossScale", "DynamicLossScale"):
        args = ", ".join(f"{key}={value!r}" for key, value in spec["value"].items())
        return f"tf.mixed_precision.experimental.{spec['py']}({args})"
    return repr(specs.value(spec))


def codemod_kwargs(loss_scale_source, target):
    """The migrated construction's keyword arguments (literals), or the warning codes if it was not rewritten."""
    source = f"import tensorflow as tf\nopt = {EXPERIMENTAL}(tf.keras.optimizers.SGD(), {loss_scale_source})\n"
    result = migrate_source(source.encode(), target)
    assert result.status in ("changed", "unchanged"), result.error
    codes = [finding.code for finding in result.findings]
    call = ast.parse(result.new.decode()).body[-1].value
    if "lossscale_compat" in ast.unparse(call.func):
        return None, codes
    if target == "keras3" and ast.unparse(call.func).endswith("SGD"):  # Keras 3's fixed scale: the factor
        (factor,) = [kw for kw in call.keywords if kw.arg == "loss_scale_factor"]
        return {"dynamic": False, "initial_scale": ast.literal_eval(factor.value)}, codes
    return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}, codes


def message_kwargs(kwargs):
    """The keyword arguments of the construction the tf_keras deprecation message names."""
    text = _conversions.replacement_call(kwargs, "tf.keras.mixed_precision", keras3=False)
    (code,) = re.findall(r"`([^`]*)`", text)
    call = ast.parse(code).body[0].value
    return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}


@pytest.mark.parametrize("case", FORMS, ids=[case["name"] for case in FORMS])
def test_shim_codemod_and_message_give_tf24s_own_settings(case):
    """Every reading of a golden loss-scale form equals the settings TF 2.4.0 recorded for it."""
    expected = tf24_arguments(case["serialize"]["ok"]["config"])
    loss_scale = specs.value(case["form"]["loss_scale"], lossscale_compat.FixedLossScale,
                             lossscale_compat.DynamicLossScale)
    shim = _conversions.loss_scale_to_kwargs(loss_scale)
    assert completed(shim) == expected
    assert completed(message_kwargs(shim)) == expected

    written, codes = codemod_kwargs(source_of(case["form"]["loss_scale"]), "tf_keras")
    if case["form"]["loss_scale"]["py"] == "bool":  # `True` is no number literal: TF 2.4's class keeps it
        assert written is None and codes == [w.OPTIMIZER_SHIM_NOTE]
        return
    assert completed(written) == expected and codes == []

    written, codes = codemod_kwargs(source_of(case["form"]["loss_scale"]), "keras3")
    if expected["dynamic"] or _mapping.is_exact_loss_scale_factor(expected["initial_scale"]):
        assert completed(written) == expected
    else:  # Keras 3 divides by the factor where TF 2.4 multiplied by its reciprocal: TF 2.4's class keeps it
        assert written is None and codes == [w.OPTIMIZER_SHIM_NOTE]


@pytest.mark.parametrize("case", REFUSED, ids=[case["name"] for case in REFUSED])
def test_a_multiplier_other_than_two_is_refused_by_the_shim_and_kept_on_tf24s_class_by_the_codemod(case):
    """TF 2.4.0 refused these forms; the shim raises its error, and the codemod hands them to TF 2.4's class."""
    (spec,) = case["args"]
    loss_scale = specs.value(spec, lossscale_compat.FixedLossScale, lossscale_compat.DynamicLossScale)
    with pytest.raises(ValueError, match="multiplier must be 2"):
        _conversions.loss_scale_to_kwargs(loss_scale)
    for target in ("tf_keras", "keras3"):
        written, codes = codemod_kwargs(source_of(spec), target)
        assert written is None and codes[0] == w.OPTIMIZER_SHIM_NOTE


def test_a_dynamic_setting_equal_to_the_default_is_left_out_by_every_reader():
    """`DynamicLossScale(32768, 2000)` is plain `LossScaleOptimizer(opt)` in the shim, the codemod and messages."""
    assert _conversions.loss_scale_to_kwargs(lossscale_compat.DynamicLossScale(2**15, 2000)) == {}
    written, codes = codemod_kwargs("tf.mixed_precision.experimental.DynamicLossScale(32768, 2000)", "tf_keras")
    assert written == {} and codes == []
    assert message_kwargs({}) == {}
