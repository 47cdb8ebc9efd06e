"""Differential property test: ours against TensorFlow's own surviving DynamicLossScale, step for step."""

import math

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st
from tf24_goldens import dynamic_loss_scale

import lossscale_compat
from lossscale_compat import _flavour


pytestmark = pytest.mark.skipif(
    "DynamicLossScale" not in _flavour.TF_LOSS_SCALE_CLASSES,
    reason="this TensorFlow no longer ships tf.compat.v1.mixed_precision.DynamicLossScale")

F32_MAX = 3.4028234663852886e38

gradient_values = st.one_of(
    st.floats(min_value=-(2.0**100), max_value=2.0**100, allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from([math.nan, math.inf, -math.inf]),
)
# One step: a few gradient tensors, some None; values include injected inf and NaN.
step = st.lists(
    st.one_of(st.none(), st.lists(gradient_values, min_size=1, max_size=3)),
    min_size=0, max_size=3,
)
settings_ = st.fixed_dictionaries({
    "initial_loss_scale": st.sampled_from([0.25, 1.0, 3.0, 1024.0, 2.0**15, F32_MAX / 2, F32_MAX]),
    "increment_period": st.integers(min_value=-1, max_value=4),
    "multiplier": st.sampled_from([2.0, 3.0, 0.5, 1.5, 4.0]),
})


def as_grads(step_values):
    return [None if values is None else tf.constant(values, tf.float32) for values in step_values]


def observe(loss_scale, should_apply):
    return (bool(should_apply.numpy()), float(loss_scale()), int(loss_scale._num_good_steps.numpy()))


def same(a, b):
    nan = lambda x: isinstance(x, float) and math.isnan(x)  # noqa: E731
    return len(a) == len(b) and all(x == y or (nan(x) and nan(y)) for x, y in zip(a, b))


@settings(max_examples=150, deadline=None)
@given(config=settings_, steps=st.lists(step, min_size=1, max_size=12))
def test_same_scale_and_decision_as_tf_compat_v1(config, steps):
    ours = dynamic_loss_scale(config)
    theirs = tf.compat.v1.mixed_precision.DynamicLossScale(**config)
    for number, step_values in enumerate(steps):
        grads = as_grads(step_values)
        observed_ours = observe(ours, ours.update(grads)[1])
        observed_theirs = observe(theirs, theirs.update(grads)[1])
        assert same(observed_ours, observed_theirs), f"step {number}: {observed_ours} != {observed_theirs}"
