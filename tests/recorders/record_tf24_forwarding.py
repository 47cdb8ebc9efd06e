"""Records what TF 2.4.0's Keras loss-scale optimizers passed on to inner optimizers that override their methods.

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/tf24/bin/python tests/recorders/record_tf24_forwarding.py

For both forms (`tf.keras.mixed_precision.LossScaleOptimizer` and the experimental one), over the inner optimizers of
tests/goldens/forwarding_specs.py, it writes to tests/goldens/tf24_forwarding.json each step's weights, loss scale
and `iterations`, and every call the inner optimizer's overridden methods received (positional and keyword
arguments): `apply_gradients` called in several ways, `minimize`, `get_gradients` and `_aggregate_gradients`.
"""


import tf24_recording
from tf24_recording import tf

import forwarding_specs as specs

MP = tf.keras.mixed_precision


def _optimizer(form, inner):
    return specs.make_optimizer(
        tf, form, inner, MP.LossScaleOptimizer, MP.experimental.LossScaleOptimizer,
        tf.mixed_precision.experimental.DynamicLossScale,
    )


def _inner(index, kwargs):
    return specs.inner_classes(tf)[index](**kwargs)


def main():
    apply_cases, minimize_cases, other_cases = [], [], []
    for form in specs.FORMS:
        for name, (index, kwargs, call) in sorted(specs.APPLY_CASES.items()):
            result = specs.run_apply_case(tf, _optimizer(form, _inner(index, kwargs)), specs.APPLY_CALLS[call])
            apply_cases.append(dict(result, form=form, case=name))
        for call in sorted(specs.MINIMIZE_CALLS):
            optimizer = _optimizer(form, _inner(1, {"learning_rate": 0.05}))
            result = specs.run_minimize_case(tf, optimizer, specs.MINIMIZE_CALLS[call])
            minimize_cases.append(dict(result, form=form, call=call))
        adamw = _inner(0, {"learning_rate": 0.1, "weight_decay_rate": 0.01})
        other_cases.append(dict(specs.run_get_gradients_case(tf, _optimizer(form, adamw)), form=form, case="get_gradients"))
        sgd = _optimizer(form, tf.keras.optimizers.SGD(0.1))
        other_cases.append(dict(specs.run_get_gradients_case(tf, sgd), form=form, case="get_gradients_plain"))
        other_cases.append(dict(specs.run_aggregate_case(tf, sgd), form=form, case="aggregate_gradients"))
    tf24_recording.write_goldens("tf24_forwarding.json", "record_tf24_forwarding.py", {
        "apply": apply_cases, "minimize": minimize_cases, "other": other_cases,
    })


if __name__ == "__main__":
    main()
