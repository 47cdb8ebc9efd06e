"""Every public path's train step, audited op by op for a GPU (issue 36), the bodies of nested functions included:

1. every op has a GPU or device-agnostic (DEFAULT) kernel for its dtypes: on the GPU build of TensorFlow only, which
   registers its GPU kernels without a GPU (stack tf221-keras3-gpu);
2. no py_function or numpy_function;
3. no more conditionals and loops (host syncs on a GPU) than the stack's own optimizer on the same loop, and, for
   TF 2.4's loop, than TF 2.4.0 (tests/goldens/tf24_gpu_audit.json, by tests/recorders/record_tf24_gpu_audit.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

import audit_steps  # noqa: E402  (tests/goldens)

import lossscale_compat  # noqa: E402
from lossscale_compat import _flavour, _step_audit  # noqa: E402
from lossscale_compat._deprecation import quiet  # noqa: E402
from lossscale_compat.legacy import _graph_rewrite  # noqa: E402

TF24 = json.loads((Path(__file__).resolve().parents[1] / "goldens" / "tf24_gpu_audit.json").read_text())["steps"]
GPU_BUILD = tf.test.is_built_with_cuda() or tf.test.is_built_with_rocm()
KERAS3 = _flavour.has_keras3_loss_scaling()
SGD = tf.keras.optimizers.SGD
OURS = {
    "keras dynamic": lambda: lossscale_compat.KerasLossScaleOptimizer(SGD(0.1)),
    "keras fixed": lambda: lossscale_compat.KerasLossScaleOptimizer(SGD(0.1), dynamic=False, initial_scale=128),
    "experimental dynamic": lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), "dynamic"),
    "experimental fixed": lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), 128),
}


def native_dynamic():
    return tf.keras.mixed_precision.LossScaleOptimizer(SGD(0.1))


def native(form: str):
    """The stack's own counterpart of one of `OURS`: a fixed scale is Keras 2's own fixed form; Keras 3 has none, so
    there it is the bare inner optimizer, to which a fixed scale should add no conditional."""
    if form.endswith("dynamic"):
        return native_dynamic
    if KERAS3:
        return lambda: SGD(0.1)
    return lambda: tf.keras.mixed_precision.LossScaleOptimizer(SGD(0.1), dynamic=False, initial_scale=128)


@pytest.fixture(autouse=True)
def mixed_float16():
    """Each step is built under mixed_float16; the policy and the graph rewrite are put back after."""
    before = tf.keras.mixed_precision.global_policy()
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    with quiet():
        _graph_rewrite.disable_mixed_precision_graph_rewrite()
    tf.keras.mixed_precision.set_global_policy(before)


def traced(make_step, optimizer, strategy=None):
    """The GraphDef of one step of `make_step` (audit_steps) with `optimizer`, built under `strategy` if given."""
    if strategy is None:
        return audit_steps.traced(tf, make_step(tf, audit_steps.make_model(tf), optimizer and optimizer()), None)
    with strategy.scope():
        model, made = audit_steps.make_model(tf), optimizer()
        if KERAS3 and not isinstance(made, lossscale_compat.KerasLossScaleOptimizer):
            made.build(model.trainable_variables)  # Keras 3's own class cannot build inside a replica step
        step = make_step(tf, model, made)
    return audit_steps.traced(tf, step, strategy)


def problems(graph_def, most_host_syncs: int) -> list[str]:
    """What the audit finds wrong with a step allowed `most_host_syncs` conditionals and loops."""
    found = _step_audit.audit(graph_def)
    wrong = [f"calls Python: {where}" for where in found.python_calls]
    wrong += [f"TF1 control flow: {where}" for where in found.v1_control_flow]
    if found.host_syncs > most_host_syncs:
        wrong.append(f"{found.conditionals} conditionals and {found.loops} loops, more than {most_host_syncs}")
    if GPU_BUILD:
        wrong += [f"no GPU kernel: {op}" for op in _step_audit.ops_without_gpu_kernel(graph_def)]
    return wrong


def host_syncs(graph_def) -> int:
    return _step_audit.audit(graph_def).host_syncs


def tf24(key: str) -> int:
    return TF24[key]["conditionals"] + TF24[key]["loops"]


@pytest.mark.parametrize("form", list(OURS))
def test_tf24_loop_is_gpu_clean_and_syncs_no_more_than_tf24(form):
    most = tf24(f"tf24 loop, {form}")
    if not KERAS3:  # Keras 2's own class runs TF 2.4's loop too
        most = min(most, host_syncs(traced(audit_steps.tf24_loop, native(form))))
    assert problems(traced(audit_steps.tf24_loop, OURS[form]), most) == []


@pytest.mark.skipif(not KERAS3, reason="Keras 2's optimizers have no `scale_loss`: no Keras 3 loop to audit")
@pytest.mark.parametrize("form", list(OURS))
def test_keras3_loop_syncs_no_more_than_keras3s_own_class(form):
    """A fixed scale adds no conditional at all to the inner optimizer's step; a dynamic one no more than native's."""
    most = host_syncs(traced(audit_steps.keras3_loop, native(form)))
    assert problems(traced(audit_steps.keras3_loop, OURS[form]), most) == []


@pytest.mark.parametrize("form", ["keras dynamic", "experimental fixed"])
def test_fits_train_step_syncs_no_more_than_native_and_tf24(form):
    most = min(tf24(f"fit, {form}"), host_syncs(traced(audit_steps.fit_step, native(form))))
    assert problems(traced(audit_steps.fit_step, OURS[form]), most) == []


def test_legacy_compile_wrap_syncs_no_more_than_tf24s():
    """TF 2.4's Policy: `compile` wraps SGD in our dynamic LossScaleOptimizer, as TF 2.4's compile did."""
    tf.keras.mixed_precision.set_global_policy(lossscale_compat.Policy("mixed_float16"))
    model = audit_steps.make_model(tf)
    step = audit_steps.fit_step(tf, model, None)
    assert isinstance(model.optimizer, lossscale_compat.KerasLossScaleOptimizer)
    native = host_syncs(traced(audit_steps.fit_step, native_dynamic))
    assert problems(audit_steps.traced(tf, step), min(tf24("fit, compile wrap"), native)) == []


def test_graph_rewrite_syncs_no_more_than_tf24s():
    tf.keras.mixed_precision.set_global_policy("float32")  # TF 2.4 refused the rewrite under a mixed policy
    optimizer = lossscale_compat.enable_mixed_precision_graph_rewrite(SGD(0.1))
    assert isinstance(optimizer, lossscale_compat.KerasLossScaleOptimizer)
    assert problems(traced(audit_steps.tf24_loop, lambda: optimizer), tf24("tf24 loop, graph rewrite")) == []


def test_mirrored_strategy_syncs_no_more_than_tf24_and_native(mirrored):
    most = tf24("tf24 loop, keras dynamic, MirroredStrategy")
    assert problems(traced(audit_steps.tf24_loop, OURS["keras dynamic"], mirrored), most) == []
    if KERAS3:
        native = host_syncs(traced(audit_steps.keras3_loop, native_dynamic, mirrored))
        assert problems(traced(audit_steps.keras3_loop, OURS["keras dynamic"], mirrored), native) == []


def test_the_audit_reports_a_py_function_an_extra_conditional_and_a_cpu_only_op():
    """Should fail if the audit could not see what costs a GPU step: Python on the host, one more host sync, and
    (on the GPU build) an op with no GPU kernel."""
    model, optimizer = audit_steps.make_model(tf), OURS["keras dynamic"]()
    clean = audit_steps.tf24_loop(tf, model, optimizer)

    def step(x, y):
        loss = clean(x, y)
        from_python = tf.py_function(lambda: 1.0, [], tf.float32)
        tf.cond(loss > 0, lambda: tf.identity(loss), lambda: tf.identity(from_python))
        tf.print(tf.strings.as_string(loss))  # AsString has CPU kernels only
        return loss

    base = _step_audit.audit(traced(audit_steps.tf24_loop, OURS["keras dynamic"]))
    graph_def = audit_steps.traced(tf, step)
    found = _step_audit.audit(graph_def)
    assert found.conditionals == base.conditionals + 1
    assert [where.split(" ")[-1] for where in found.python_calls] == ["(EagerPyFunc)"]
    wrong = problems(graph_def, base.host_syncs)
    assert any(line.startswith("calls Python:") for line in wrong)
    assert f"{base.conditionals + 1} conditionals and 0 loops, more than {base.host_syncs}" in wrong
    if GPU_BUILD:
        assert any("AsString" in line for line in wrong if line.startswith("no GPU kernel:"))


def test_nested_function_bodies_are_walked_at_each_call_site():
    """A conditional inside a tf.function called twice counts twice; its body's ops are counted too."""

    @tf.function
    def inner(x):
        return tf.cond(x > 0, lambda: x * 2.0, lambda: x)

    def step(x, y):
        return inner(x) + inner(y)

    found = _step_audit.audit(audit_steps.traced(tf, step))
    assert found.conditionals == 2
    assert found.op_types["Mul"] == 2


@pytest.mark.skipif(GPU_BUILD, reason="on the GPU build the kernel check runs in every audit above")
def test_on_tensorflow_cpu_the_kernel_check_finds_no_gpu_kernel_so_the_audits_skip_it():
    """tensorflow-cpu registers no GPU kernel, so the check reports even a plain `Mul`: the audits above leave it to
    the tf221-keras3-gpu stack (lossscale_compat/_stacks.py)."""
    graph_def = audit_steps.traced(tf, lambda x, y: tf.reduce_sum(x * y))
    assert any("Mul" in op for op in _step_audit.ops_without_gpu_kernel(graph_def))
