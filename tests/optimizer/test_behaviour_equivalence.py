"""Behaviour equivalence: TF 2.4.0's trajectories on the check's own stream, and every difference caught."""

import json
import unittest

import numpy as np
import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import KERAS3, specs

import lossscale_compat
from lossscale_compat import _behaviour, _flavour
from lossscale_compat.testing import assert_behaviour_equivalent, assert_config_equivalent, behaviour_difference

GOLDENS = json.loads((GOLDEN_DIR / "equivalence.json").read_text())["trajectories"]
SGD = tf.keras.optimizers.SGD
Native = tf.keras.mixed_precision.LossScaleOptimizer
EVERY_SKIP = {"nonfinite": {1: "inf", 2: "nan", 3: "inf"}, "steps": 6}  # for scales with 2000 growth steps


def ours(case):
    """Our TF 2.4 construction of a golden case."""
    return lambda: lossscale_compat.KerasLossScaleOptimizer(inner(case), **case["kwargs"])


def inner(case, **kwargs):
    """The golden case's inner optimizer, with `kwargs` added to its arguments."""
    spec = dict(case["inner"], config=dict(case["inner"]["config"], **kwargs))
    return specs.inner_optimizer(spec, tf.keras.optimizers)


def stream(case):
    return {"steps": case["steps"], "nonfinite": {int(step): kind for step, kind in case["nonfinite"].items()}}


def first_skip(case):
    """The first step TF 2.4.0 skipped, from the golden."""
    return next(step for step, record in enumerate(case["records"]) if record["skipped"])


@pytest.mark.parametrize("jit_compile", [False, True], ids=["function", "jit"])
@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_our_optimizer_on_the_checks_stream_is_tf24(name, jit_compile):
    """Driven as the check drives it, our optimizer does what TF 2.4.0's did, step by step."""
    case = GOLDENS[name]
    records = _behaviour.trajectory(ours(case), jit_compile=jit_compile, **stream(case))
    assert len(records) == len(case["records"])
    for step, (got, want) in enumerate(zip(records, case["records"])):
        for key in ("loss_scale", "skipped", "iterations"):
            assert got[key] == want[key], f"step {step}: {key} {got[key]} != TF 2.4.0's {want[key]}"
        assert len(got["variables"]) == len(want["variables"])
        for got_v, want_v in zip(got["variables"], want["variables"]):
            np.testing.assert_allclose(got_v, want_v, rtol=1e-6, atol=1e-7, err_msg=f"step {step}")


def test_the_default_stream_grows_skips_twice_in_a_row_and_recovers():
    """The default schedule exercises what the issue asks for, as TF 2.4.0's trajectory shows."""
    case = GOLDENS["dynamic_sgd_momentum"]
    assert stream(case) == {"steps": _behaviour.default_steps(3), "nonfinite": _behaviour.default_nonfinite(3)}
    scales = [record["loss_scale"] for record in case["records"]]
    skipped = [record["skipped"] for record in case["records"]]
    assert max(scales[:first_skip(case)]) > scales[0], "the scale grows before the first skip"
    assert any(a and b for a, b in zip(skipped, skipped[1:])), "two skips back to back"
    assert scales[-1] > min(scales) and not skipped[-1], "it recovers and grows again"


@pytest.mark.parametrize("name", ["dynamic_sgd_momentum", "fixed_scale"])
def test_the_stacks_own_optimizer_against_ours(name):
    """Keras 2's class trains as TF 2.4 did; Keras 3's does not count skipped steps, and the check says so."""
    case = GOLDENS[name]
    kwargs = dict(case["kwargs"])
    if not kwargs.get("dynamic", True) and KERAS3:
        native = lambda: inner(case, loss_scale_factor=float(kwargs["initial_scale"]))  # noqa: E731
    else:
        if KERAS3:
            kwargs.pop("dynamic", None)
        native = lambda: Native(inner(case), **kwargs)  # noqa: E731
    assert_config_equivalent(ours(case)(), native())
    if KERAS3 and case["kwargs"].get("dynamic", True):
        with pytest.raises(AssertionError) as raised:
            assert_behaviour_equivalent(ours(case), native)
        message = str(raised.value)
        if _flavour.keras_loss_scale_optimizer_counts_steps():
            assert message.startswith(f"The optimizers train differently: first at step {first_skip(case)} ")
            assert f"iterations: {case['records'][first_skip(case)]['iterations']} (old) != " in message
            assert _behaviour._ITERATIONS_HINT in message
        else:  # its `iterations` stays 0 from the first step on
            assert message.startswith("The optimizers train differently: first at step 0 ")
            assert f"iterations: {case['records'][0]['iterations']} (old) != 0 (new)" in message
            assert _behaviour._FROZEN_ITERATIONS_HINT in message and _behaviour._ITERATIONS_HINT not in message
    else:
        assert_behaviour_equivalent(ours(case), native)


@pytest.mark.skipif(not KERAS3, reason="Keras 2's LossScaleOptimizer is TF 2.4's, whose `iterations` counts every step")
def test_the_gate_says_whether_the_stacks_own_optimizer_counts_its_steps():
    """`keras_loss_scale_optimizer_counts_steps` matches what Keras's own class does with two applied steps."""
    native, variable = Native(SGD(0.1)), tf.Variable(1.0)
    for _ in range(2):
        native.apply([tf.constant(1.0)], [variable])
    assert int(native.inner_optimizer.iterations.numpy()) == 2
    counts = int(native.iterations.numpy()) == 2
    assert counts == _flavour.keras_loss_scale_optimizer_counts_steps()
    assert _flavour.iterations_never_advance(native) is not counts
    assert not _flavour.iterations_never_advance(lossscale_compat.KerasLossScaleOptimizer(SGD(0.1)))


@pytest.mark.skipif(not KERAS3, reason="Keras 2's LossScaleOptimizer has TF 2.4's floor of 1")
def test_keras3_has_no_floor_of_one_and_the_check_says_so():
    case = GOLDENS["floor_of_one"]
    with pytest.raises(AssertionError) as raised:
        assert_behaviour_equivalent(ours(case), lambda: Native(SGD(0.1), **case["kwargs"]), **stream(case))
    message = str(raised.value)
    assert message.startswith("The optimizers train differently: first at step 0 ")
    assert f"loss scale: {case['records'][0]['loss_scale']!r} (old) != " in message
    assert _behaviour._FLOOR_HINT in message


@pytest.mark.skipif(not KERAS3, reason="Keras 2's LossScaleOptimizer grows the scale only if the result is finite")
def test_keras3_doubles_into_inf_and_the_check_says_so():
    kwargs = {"initial_scale": 2.0**127, "dynamic_growth_steps": 1}
    with pytest.raises(AssertionError) as raised:
        assert_behaviour_equivalent(lambda: lossscale_compat.KerasLossScaleOptimizer(SGD(0.1), **kwargs),
                                    lambda: Native(SGD(0.1), **kwargs), steps=2, nonfinite={})
    message = str(raised.value)
    assert message.startswith("The optimizers train differently: first at step 0 ")
    assert f"loss scale: {2.0**127!r} (old) != inf (new)" in message
    assert _behaviour._INF_HINT in message


def test_doctest_equalities_train_alike():
    """TF 2.4's documented equalities: 'dynamic' is the default, DynamicLossScale(2048, 500) its settings."""
    assert_behaviour_equivalent(lambda: lossscale_compat.LossScaleOptimizer(SGD(), "dynamic"),
                                lambda: lossscale_compat.KerasLossScaleOptimizer(SGD()), **EVERY_SKIP)
    assert_behaviour_equivalent(
        lambda: lossscale_compat.LossScaleOptimizer(SGD(), lossscale_compat.DynamicLossScale(2048, 500)),
        lambda: lossscale_compat.KerasLossScaleOptimizer(SGD(), initial_scale=2048, dynamic_growth_steps=500),
        **EVERY_SKIP)
    assert_behaviour_equivalent(lambda: lossscale_compat.LossScaleOptimizer(SGD(), 123),
                                lambda: lossscale_compat.KerasLossScaleOptimizer(SGD(), dynamic=False,
                                                                                 initial_scale=123))


def sgd_lso(learning_rate=0.1, momentum=0.9, **kwargs):
    return lambda: lossscale_compat.KerasLossScaleOptimizer(SGD(learning_rate, momentum=momentum), **kwargs)


ONE_SETTING = [
    pytest.param(sgd_lso(initial_scale=8, dynamic_growth_steps=3),
                 sgd_lso(0.2, initial_scale=8, dynamic_growth_steps=3),
                 "inner_optimizer.learning_rate", 0, "variables[", id="learning rate"),
    pytest.param(sgd_lso(initial_scale=8, dynamic_growth_steps=3),
                 sgd_lso(momentum=0.5, initial_scale=8, dynamic_growth_steps=3),
                 "inner_optimizer.momentum", 1, "variables[", id="momentum"),  # momentum acts from step 1
    pytest.param(sgd_lso(initial_scale=8, dynamic_growth_steps=3), sgd_lso(initial_scale=16, dynamic_growth_steps=3),
                 "initial_scale", 0, "loss scale: 8.0 (old) != 16.0 (new)", id="initial scale"),
    pytest.param(sgd_lso(initial_scale=8, dynamic_growth_steps=3), sgd_lso(initial_scale=8, dynamic_growth_steps=4),
                 "dynamic_growth_steps", 2, "loss scale: 16.0 (old) != 8.0 (new)", id="growth steps"),
    pytest.param(sgd_lso(dynamic=False, initial_scale=8), sgd_lso(initial_scale=8, dynamic_growth_steps=3),
                 "loss_scaling", 2, "loss scale: 8.0 (old) != 16.0 (new)", id="fixed vs dynamic"),
]


@pytest.mark.parametrize("old, new, config_key, step, says", ONE_SETTING)
def test_each_check_fails_on_one_differing_setting(old, new, config_key, step, says):
    with pytest.raises(AssertionError, match=config_key):
        assert_config_equivalent(old(), new())
    with pytest.raises(AssertionError) as raised:
        assert_behaviour_equivalent(old, new)
    assert str(raised.value).startswith(f"The optimizers train differently: first at step {step} ")
    assert says in str(raised.value)


def test_a_skip_is_reported_with_what_was_injected():
    """Fixed against dynamic with a skip before any growth: the skip decision itself differs."""
    message = behaviour_difference(sgd_lso(dynamic=False, initial_scale=8), sgd_lso(initial_scale=8),
                                   nonfinite={1: "nan"}, steps=3)
    assert message.startswith("The optimizers train differently: first at step 1 of 3 (0-based; nan injected "
                              "into a gradient):")
    assert "skipped: False (old) != True (new)" in message
    assert "loss scale: 8.0 (old) != 4.0 (new)" in message
    assert "Keras 3" not in message  # the notes are for sides that run Keras 3's own algorithm


def test_objects_and_factories_and_many_variables():
    assert_behaviour_equivalent(lossscale_compat.KerasLossScaleOptimizer(SGD(0.1), initial_scale=4),
                                sgd_lso(momentum=0.0, initial_scale=4), variables=[(2,), (3, 2), np.ones((4,))],
                                steps=4, nonfinite={2: "-inf"})


@pytest.mark.parametrize("bad, error, says", [
    pytest.param("sgd", TypeError, "an optimizer or a function that builds one", id="a string"),
    pytest.param(lambda: 3, TypeError, "an optimizer or a function that builds one", id="a factory of junk"),
])
def test_bad_sides_say_what_to_pass(bad, error, says):
    with pytest.raises(error, match=says):
        assert_behaviour_equivalent(bad, sgd_lso())


def test_a_used_or_shared_optimizer_is_refused():
    shared = sgd_lso(initial_scale=4)()
    with pytest.raises(ValueError, match="same optimizer object"):
        assert_behaviour_equivalent(shared, shared)
    assert_behaviour_equivalent(shared, sgd_lso(initial_scale=4), steps=1, nonfinite={})
    with pytest.raises(ValueError, match="already been used"):
        assert_behaviour_equivalent(shared, sgd_lso(initial_scale=4), steps=1, nonfinite={})


def test_unknown_nonfinite_kind_is_refused():
    with pytest.raises(ValueError, match=r"must be one of \['-inf', 'inf', 'nan'\]"):
        assert_behaviour_equivalent(sgd_lso(), sgd_lso(), nonfinite={0: "big"})


def test_usable_from_unittest():
    """The checks raise AssertionError, so unittest counts a difference as a failure, not an error."""
    class Case(unittest.TestCase):
        def test_differs(self):
            assert_config_equivalent(sgd_lso(initial_scale=4)(), sgd_lso(initial_scale=8)())

        def test_same(self):
            assert_behaviour_equivalent(sgd_lso(initial_scale=4), sgd_lso(initial_scale=4), steps=3,
                                        nonfinite={1: "nan"})

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Case).run(result)
    assert (result.testsRun, len(result.failures), len(result.errors)) == (2, 1, 0)
    assert "initial_scale: 4.0 (old) != 8.0 (new)" in result.failures[0][1]


@pytest.mark.parametrize("steps", [0, -3, 2.5, True])
def test_no_steps_is_refused_rather_than_passing_any_two_optimizers(steps):
    different = (sgd_lso(initial_scale=8), sgd_lso(0.5, initial_scale=8))
    with pytest.raises(ValueError, match=r"`steps` must be a whole number of at least 1, but got: "):
        behaviour_difference(*different, steps=steps, nonfinite={})
    assert behaviour_difference(*different, steps=1, nonfinite={})  # the same pair, one step: they differ


@pytest.mark.parametrize("nonfinite", [{99: "nan"}, {4: "inf"}, {-1: "nan"}, {1.0: "nan"}])
def test_a_nonfinite_step_outside_the_run_is_refused(nonfinite):
    with pytest.raises(ValueError, match=r"`nonfinite` steps must be whole numbers from 0 to 3 \(there are 4 steps"):
        assert_behaviour_equivalent(sgd_lso(), sgd_lso(), steps=4, nonfinite=nonfinite)
    assert_behaviour_equivalent(sgd_lso(), sgd_lso(), steps=4, nonfinite={np.int64(3): "nan"})


def test_a_huge_growth_interval_is_refused_before_any_gradient_is_made():
    """The default schedule is 2 * dynamic_growth_steps + 5 steps, all made up front: 10**9 would exhaust memory."""
    old = lambda: lossscale_compat.KerasLossScaleOptimizer(SGD(0.1), dynamic_growth_steps=10**9)  # noqa: E731
    with pytest.raises(ValueError, match=r"dynamic_growth_steps=1000000000 .* Pass `steps` and `nonfinite`"):
        assert_behaviour_equivalent(old, old)
    assert_behaviour_equivalent(old, old, steps=4, nonfinite={2: "inf"})  # the way out the message names


def test_a_huge_number_of_steps_is_refused_before_any_gradient_is_made():
    """`steps=10**9` made every step's gradients up front: 4 GB and minutes before it was stopped (round five)."""
    with pytest.raises(ValueError, match=r"`steps` must be at most 100,000, but got: 1,000,000,000; "):
        assert_behaviour_equivalent(sgd_lso(), sgd_lso(), steps=10**9)


@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        ({"nonfinite": [1]}, TypeError, r"`nonfinite` must map a step to 'inf', 'nan' or '-inf', but got: \[1\]"),
        ({"variables": []}, ValueError, r"`variables` holds no variable, so there is nothing to train"),
    ],
)
def test_a_schedule_of_the_wrong_shape_is_one_clear_error(options, error, says):
    """A list for `nonfinite` was an AttributeError; no variables an IndexError (round five)."""
    with pytest.raises(error, match=says):
        assert_behaviour_equivalent(sgd_lso(), sgd_lso(), steps=3, **options)


@pytest.mark.parametrize("tolerance", [{"rtol": float("nan")}, {"atol": float("nan")}, {"rtol": -1.0}, {"atol": "x"}])
def test_a_tolerance_that_is_not_a_number_of_at_least_0_is_refused(tolerance):
    """With `rtol=nan` two optimizers that train differently passed: no difference is ever beyond NaN (round five)."""
    different = (sgd_lso(initial_scale=8), sgd_lso(0.5, initial_scale=8))
    with pytest.raises(ValueError, match=r"`rtol` and `atol` must be numbers of at least 0, but got: "):
        behaviour_difference(*different, steps=3, nonfinite={}, **tolerance)
