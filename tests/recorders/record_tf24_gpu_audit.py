"""Records how many ops, conditionals and loops TF 2.4.0's train steps hold, for the GPU audit (tests/gpu).

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/tf24/bin/python tests/recorders/record_tf24_gpu_audit.py

Each step of tests/goldens/audit_steps.py is traced on TF 2.4.0's own classes and counted by
lossscale_compat/_step_audit.py (loaded by path: the package needs a newer TensorFlow), into
tests/goldens/tf24_gpu_audit.json.
"""

import importlib.util
import os
import sys

import tf24_recording
from tf24_recording import tf

import audit_steps  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("_step_audit", os.path.join(ROOT, "lossscale_compat", "_step_audit.py"))
step_audit = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = step_audit  # dataclasses look their module up by name
_spec.loader.exec_module(step_audit)

mixed_precision = tf.keras.mixed_precision
OPTIMIZERS = {
    "keras dynamic": lambda: mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1)),
    "keras fixed": lambda: mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.1), dynamic=False, initial_scale=128
    ),
    "experimental dynamic": lambda: mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.1), "dynamic"
    ),
    "experimental fixed": lambda: mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 128),
}


def counted(make_step, optimizer=None, strategy=None, policy="mixed_float16"):
    mixed_precision.set_global_policy(policy)
    try:
        if strategy is None:
            model = audit_steps.make_model(tf)
            step = make_step(tf, model, optimizer and optimizer())
        else:
            with strategy.scope():
                model = audit_steps.make_model(tf)
                step = make_step(tf, model, optimizer and optimizer())
        found = step_audit.audit(audit_steps.traced(tf, step, strategy))
    finally:
        mixed_precision.set_global_policy("float32")
    assert not found.python_calls and not found.v1_control_flow, found
    return found.summary()


def graph_rewrite_step():
    optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1))
    try:
        return counted(audit_steps.tf24_loop, lambda: optimizer, policy="float32")
    finally:
        tf.train.experimental.disable_mixed_precision_graph_rewrite()


def main():
    data = {f"tf24 loop, {name}": counted(audit_steps.tf24_loop, make) for name, make in OPTIMIZERS.items()}
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    data["tf24 loop, keras dynamic, MirroredStrategy"] = counted(
        audit_steps.tf24_loop, OPTIMIZERS["keras dynamic"], strategy=mirrored
    )
    # compile under mixed_float16 wraps SGD in the dynamic LossScaleOptimizer; fit runs train_step.
    data["fit, compile wrap"] = counted(audit_steps.fit_step)
    data["fit, keras dynamic"] = counted(audit_steps.fit_step, OPTIMIZERS["keras dynamic"])
    data["fit, experimental fixed"] = counted(audit_steps.fit_step, OPTIMIZERS["experimental fixed"])
    data["tf24 loop, graph rewrite"] = graph_rewrite_step()
    tf24_recording.write_goldens("tf24_gpu_audit.json", "record_tf24_gpu_audit.py", {"steps": data})


if __name__ == "__main__":
    main()
