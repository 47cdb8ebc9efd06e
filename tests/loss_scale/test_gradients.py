"""Which gradient inputs `update` accepts and how it judges them, as on TF 2.4.0."""

import pytest
import tensorflow as tf
from tf24_goldens import GOLDENS, specs, state

import lossscale_compat

CASES = GOLDENS["grad_inputs"]


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_gradient_input_matches_tf24(case, mode):
    loss_scale = lossscale_compat.DynamicLossScale(**case["kwargs"])
    update = (lambda g: loss_scale.update(g)[1]) if mode == "eager" else tf.function(
        lambda g: loss_scale.update(g)[1])
    expected = case["modes"][mode]
    if "error" in expected:
        # Integer gradients: TF 2.4 failed in IsFinite (InvalidArgumentError eager, TypeError traced).
        with pytest.raises((tf.errors.OpError, TypeError)) as raised:
            update(specs.build(case["spec"], tf))
        assert type(raised.value).__name__ == expected["error"]["type"]
        assert "int32" in str(raised.value)
        return
    should_apply = update(specs.build(case["spec"], tf))
    assert bool(should_apply.numpy()) is expected["should_apply"]
    assert state(loss_scale) == {"scale": expected["scale"], "good_steps": expected["good_steps"]}
