"""Records what TF 2.4.0's LossScaleOptimizer did with gradients passed to `apply_gradients` without
`get_unscaled_gradients`: of a loss never scaled (a program that wraps its optimizer but keeps its loop), and of a
loss scaled with `get_scaled_loss` but not unscaled (a misuse TF 2.4 did not correct).

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/venvs/tf24/bin/python tests/recorders/record_tf24_raw_apply.py

For each case and mode (eager, tf.function) it writes to tests/goldens/tf24_raw_apply.json the variable, loss scale
and iterations after each step of a fixed gradient sequence, which includes a non-finite step.
"""


import tf24_recording
from tf24_recording import tf

GRADIENTS = ([1.0, 0.5], [0.25, -1.0], [float("inf"), 1.0], [0.5, 0.5])
SETTINGS = {
    "dynamic": {"initial_scale": 4.0, "dynamic_growth_steps": 2},
    "fixed": {"dynamic": False, "initial_scale": 8.0},
}


def _run(setting, scaled_loss, mode):
    var = tf.Variable([1.0, 2.0])
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), **SETTINGS[setting])

    def step(grads):
        if scaled_loss:  # the gradients of get_scaled_loss(sum(var * grads)), passed on as they are
            with tf.GradientTape() as tape:
                loss = optimizer.get_scaled_loss(tf.reduce_sum(var * grads))
            grads = tape.gradient(loss, var)
        optimizer.apply_gradients([(grads, var)])

    if mode == "function":
        step = tf.function(step)
    states = []
    for grads in GRADIENTS:
        step(tf.constant(grads))
        states.append({
            "var": var.numpy().tolist(),
            "loss_scale": float(optimizer.loss_scale.numpy()),
            "iterations": int(optimizer.iterations.numpy()),
        })
    return states


def main():
    cases = [
        {"setting": setting, "scaled_loss": scaled_loss, "mode": mode, "states": _run(setting, scaled_loss, mode)}
        for setting in SETTINGS
        for scaled_loss in (False, True)
        for mode in ("eager", "function")
    ]
    tf24_recording.write_goldens("tf24_raw_apply.json", "record_tf24_raw_apply.py", {
        "gradients": [[str(g) if g != g or abs(g) == float("inf") else g for g in grads] for grads in GRADIENTS],
        "settings": SETTINGS,
        "cases": cases,
    })

if __name__ == "__main__":
    main()
