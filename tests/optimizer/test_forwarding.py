"""Calls on both loss-scale optimizer forms reach inner optimizers with their own signatures as TF 2.4.0 passed them.

Goldens: tests/goldens/tf24_forwarding.json (tests/recorders/record_tf24_forwarding.py); the inner optimizers and
the loops are tests/goldens/forwarding_specs.py, shared with the recorder.
"""

import inspect
import json
import os
from pathlib import Path

import forwarding_specs as specs
import numpy as np
import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from warm_python import warm_python

import lossscale_compat
from lossscale_compat import _flavour, _forwarding

GOLDEN = json.loads((GOLDEN_DIR / "tf24_forwarding.json").read_text())


def _optimizer(form, inner):
    return specs.make_optimizer(
        tf,
        form,
        inner,
        lossscale_compat.KerasLossScaleOptimizer,
        lossscale_compat.LossScaleOptimizer,
        lossscale_compat.DynamicLossScale,
    )


def _inner(index, kwargs):
    return specs.inner_classes(tf)[index](**kwargs)


def _assert_states(got, want):
    for step, (ours, theirs) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(ours["weights"], theirs["weights"], rtol=1e-5, err_msg=f"step {step}")
        assert (ours["loss_scale"], ours["iterations"]) == (theirs["loss_scale"], theirs["iterations"]), f"step {step}"


def _expected_received(received, kwargs_only):
    """TF 2.4's calls, less the keyword a `**kwargs`-only override would hand on to a base class that refuses it."""
    if not kwargs_only or _flavour.optimizer_apply_gradients_takes("experimental_aggregate_gradients"):
        return received
    return [dict(call, kwargs={}) for call in received]


def _skips(states):
    """Steps whose loss scale fell: TF 2.4's skipped steps."""
    scales = [16.0] + [s["loss_scale"] for s in states]
    return sum(after < before for before, after in zip(scales, scales[1:]))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("case", GOLDEN["apply"], ids=[f"{c['form']}-{c['case']}" for c in GOLDEN["apply"]])
def test_apply_gradients_reaches_the_inner_override_as_on_tf24(case):
    index, kwargs, call = specs.APPLY_CASES[case["case"]]
    optimizer = _optimizer(case["form"], _inner(index, kwargs))
    got = specs.run_apply_case(tf, optimizer, specs.APPLY_CALLS[call])
    assert got["received"] == _expected_received(case["received"], kwargs_only=index == 0)
    _assert_states(got["states"], case["states"])
    assert int(optimizer.skipped_steps) == _skips(case["states"]) == 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("case", GOLDEN["minimize"], ids=[f"{c['form']}-{c['call']}" for c in GOLDEN["minimize"]])
def test_minimize_reaches_the_inner_override_as_on_tf24(case):
    optimizer = _optimizer(case["form"], _inner(1, {"learning_rate": 0.05}))
    got = specs.run_minimize_case(tf, optimizer, specs.MINIMIZE_CALLS[case["call"]])
    assert got["received"] == case["received"]
    _assert_states(got["states"], case["states"])


@pytest.fixture(scope="module")
def legacy_run(tmp_path_factory):
    """The cases run unmodified, on TF 2.4's spellings, by `lossscale-compat run` (legacy mode)."""
    out = tmp_path_factory.mktemp("legacy") / "forwarding.json"
    program = Path(__file__).resolve().parents[1] / "legacy" / "forwarding_program.py"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    done = warm_python(env).run(["-m", "lossscale_compat", "run", str(program), str(out)], cwd=out.parent)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(out.read_text())


def _key(case):
    return case["form"], case.get("case", case.get("call"))


def test_legacy_mode_hands_on_the_arguments_as_tf24(legacy_run):
    """Every case, unmodified in legacy mode: what the inner optimizers got, and the steps, as on TF 2.4.0."""
    for section in ("apply", "minimize"):
        got, want = sorted(legacy_run[section], key=_key), sorted(GOLDEN[section], key=_key)
        assert [_key(c) for c in got] == [_key(c) for c in want]
        for ours, theirs in zip(got, want):
            kwargs_only = theirs.get("case", "").startswith("adamw")
            assert ours["received"] == _expected_received(theirs["received"], kwargs_only), _key(theirs)
            _assert_states(ours["states"], theirs["states"])
    for ours, theirs in zip(sorted(legacy_run["other"], key=_key), sorted(GOLDEN["other"], key=_key)):
        assert ours.get("received") == theirs.get("received"), _key(theirs)
        assert len(ours["gradients"]) == len(theirs["gradients"]), _key(theirs)
        for got_grad, want_grad in zip(ours["gradients"], theirs["gradients"]):
            np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, err_msg=str(_key(theirs)))


def _other(form, name):
    return next(c for c in GOLDEN["other"] if c["form"] == form and c["case"] == name)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("form", sorted(specs.FORMS))
def test_get_gradients_goes_through_the_inner_optimizers_own_as_on_tf24(form):
    want = _other(form, "get_gradients")
    adamw = _inner(0, {"learning_rate": 0.1, "weight_decay_rate": 0.01})
    got = specs.run_get_gradients_case(tf, _optimizer(form, adamw))
    assert got["received"] == want["received"]
    np.testing.assert_allclose(got["gradients"], want["gradients"], rtol=1e-5)
    plain = _other(form, "get_gradients_plain")
    got = specs.run_get_gradients_case(tf, _optimizer(form, tf.keras.optimizers.SGD(0.1)))
    np.testing.assert_allclose(got["gradients"], plain["gradients"], rtol=1e-6)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("form", sorted(specs.FORMS))
def test_aggregate_gradients_is_the_inner_optimizers_as_on_tf24(form):
    want = _other(form, "aggregate_gradients")
    got = specs.run_aggregate_case(tf, _optimizer(form, tf.keras.optimizers.SGD(0.1)))
    assert got == {"gradients": want["gradients"], "count": want["count"]}


class _KerasThreeStyle(tf.keras.optimizers.SGD):
    """An override with nothing after `grads_and_vars`, as a migrated program might write it."""

    def apply_gradients(self, grads_and_vars):
        return super().apply_gradients(grads_and_vars)


def test_an_inner_override_without_a_second_parameter_refuses_a_name_naming_it():
    optimizer = lossscale_compat.KerasLossScaleOptimizer(_KerasThreeStyle(0.1), initial_scale=4.0)
    weights = tf.Variable([1.0])
    optimizer.apply_gradients([(tf.constant([1.0]), weights)])  # no name: nothing to pass, as TF 2.4 passed None
    np.testing.assert_allclose(weights.numpy(), [0.9])
    with pytest.raises(TypeError, match=r"`name` \(1\.0\).*_KerasThreeStyle\.apply_gradients takes no argument"):
        optimizer.apply_gradients([(tf.constant([1.0]), weights)], 1.0)


def test_the_aggregate_keyword_reaches_kwargs_only_where_the_base_class_takes_it():
    adamw = _inner(0, {"learning_rate": 0.1, "weight_decay_rate": 0.01})
    args, kwargs = _forwarding.apply_gradients_arguments(adamw, 1.0, False)
    assert args == (1.0,)
    base = inspect.signature(tf.keras.optimizers.Optimizer.apply_gradients).parameters.values()
    takes = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in base)  # Keras 2's; Keras 3's has none
    assert kwargs == ({"experimental_aggregate_gradients": False} if takes else {})


def test_minimize_still_takes_todays_positional_tape():
    """Today's `minimize(loss, var_list, tape)` puts the tape where TF 2.4 had `grad_loss`; it is taken as the tape."""
    optimizer = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.5), initial_scale=4.0)
    weights = tf.Variable([2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(weights * 3.0)
    optimizer.minimize(loss, [weights], tape)
    np.testing.assert_allclose(weights.numpy(), [0.5])
