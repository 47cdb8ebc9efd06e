"""A schedule's learning rate, callable with a step as in TF 2.4 and a number as in today's Keras (`_scheduled_rate`)."""

import collections

import numpy as np
import pytest
import tensorflow as tf

import lossscale_compat
from lossscale_compat import _flavour, _scheduled_rate

SCHEDULES = {
    "exponential": lambda: tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5),
    # a schedule with conditionals: a step must build no more of them than Keras's own
    "piecewise": lambda: tf.keras.optimizers.schedules.PiecewiseConstantDecay([1, 2], [0.3, 0.2, 0.1]),
}
LEARNING_RATE = _flavour.keras_learning_rate_property()


def patched_sgd():
    """Keras's SGD with the `learning_rate` that legacy mode installs on the optimizer base class."""
    return type("PatchedSGD", (tf.keras.optimizers.SGD,), {
        "learning_rate": _scheduled_rate.learning_rate_property(LEARNING_RATE[1]),
    })


def traced_steps(optimizer, steps=3):
    """Runs `steps` traced SGD steps on one variable; returns its values after each and the step's op types."""
    var = tf.Variable([1.0, -2.0])

    @tf.function
    def step():
        optimizer.apply_gradients([(tf.constant([0.5, 0.25]), var)])

    values = []
    for _ in range(steps):
        step()
        values.append(var.numpy().copy())
    graph = step.get_concrete_function().graph
    return values, collections.Counter(op.type for op in graph.get_operations())


@pytest.mark.skipif(LEARNING_RATE is None, reason="this stack's optimizer base class has no `learning_rate` property")
@pytest.mark.parametrize("name", SCHEDULES)
def test_a_step_through_the_patched_property_is_keras_own_step(name):
    native_values, native_ops = traced_steps(tf.keras.optimizers.SGD(SCHEDULES[name]()))
    values, ops = traced_steps(patched_sgd()(SCHEDULES[name]()))
    np.testing.assert_array_equal(values, native_values)
    assert ops == native_ops  # the same kernels: no extra schedule evaluation, no extra conditional


@pytest.mark.parametrize("name", SCHEDULES)
def test_our_optimizer_reads_a_schedules_rate_both_ways(name):
    schedule = SCHEDULES[name]()
    optimizer = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(schedule))
    rate = optimizer.learning_rate
    assert isinstance(rate, tf.keras.optimizers.schedules.LearningRateSchedule)
    for step in (0, 1, 2, 5):
        assert float(rate(step)) == float(schedule(step))
    assert rate.get_config() == schedule.get_config()
    current = float(schedule(0))
    assert float(rate) == pytest.approx(current)
    assert float(np.asarray(rate)) == pytest.approx(current)
    assert float(tf.cast(rate, tf.float16)) == pytest.approx(current, rel=1e-3)
    assert float(rate * 2) == pytest.approx(2 * current) and float(1 - rate) == pytest.approx(1 - current)
    assert float(tf.keras.backend.get_value(rate)) == pytest.approx(current)


def test_the_schedules_own_attributes_are_read_through_the_rate():
    schedule = SCHEDULES["exponential"]()
    rate = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(schedule)).learning_rate
    assert rate.initial_learning_rate == schedule.initial_learning_rate
    assert rate.decay_steps == schedule.decay_steps
    with pytest.raises(AttributeError):
        rate.no_such_attribute  # noqa: B018 - the read is the test


@pytest.mark.skipif(LEARNING_RATE is None, reason="this stack's optimizer base class has no `learning_rate` property")
def test_the_rate_is_the_one_keras_reads_after_steps():
    """Keras 3 reads the next step's rate, Keras 2 the last step's: the number is Keras's own either way."""
    schedule = SCHEDULES["exponential"]()
    inner = tf.keras.optimizers.SGD(schedule)
    optimizer = lossscale_compat.KerasLossScaleOptimizer(inner, dynamic=False, initial_scale=1.0)
    var = tf.Variable([1.0])
    for _ in range(3):
        optimizer.apply_gradients([(tf.constant([1.0]), var)])
    assert float(optimizer.learning_rate) == float(LEARNING_RATE[1].fget(inner))
    assert float(optimizer.lr(3)) == float(schedule(3))


def test_a_constant_rate_is_not_wrapped():
    inner = tf.keras.optimizers.SGD(0.25)
    optimizer = lossscale_compat.KerasLossScaleOptimizer(inner)
    assert not isinstance(optimizer.learning_rate, _scheduled_rate.ScheduledRate)
    assert _scheduled_rate.scheduled(inner, inner.learning_rate) is inner.learning_rate
