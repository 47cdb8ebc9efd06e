"""Under XLA our dynamic step hands the finiteness conditional the tensors Keras 3's own class hands it (issue 49).

Read from the HLO TensorFlow gives XLA (`experimental_get_compiler_ir(...)(stage="hlo")`), before XLA's own passes: a
GPU runs each conditional as such, so every tensor operand of it is written out for a branch to read back. Keras 3's
class passes the scaled gradients straight from backprop and unscales them inside the finite branch, where the
multiply fuses into the update. Ours did the same work with one more tensor per variable: the unscaled gradient,
made before the conditional. A structural check, not a timing: `bench/optimizer_overhead.py --xla` times the steps.
"""

import collections
import re

import pytest
import tensorflow as tf

import lossscale_compat
from lossscale_compat import _flavour

pytestmark = pytest.mark.skipif(
    not _flavour.has_keras3_loss_scaling(), reason="compared with Keras 3's own LossScaleOptimizer, only Keras 3 has"
)

INSTRUCTION = re.compile(r"\s+(?:ROOT )?%(\S+) = (.*?) ([a-z-]+)\((.*)$")
SCALAR = "[]"


def conditional_tensor_operands(hlo):
    """{(producing opcode, shape): count} of the non-scalar operands of every conditional, tuples looked into."""
    made = {}
    for line in hlo.splitlines():
        found = INSTRUCTION.match(line)
        if found:
            name, shape, opcode, arguments = found.groups()
            made[name] = (opcode, shape, arguments)
    operands = collections.Counter()
    for opcode, _, arguments in made.values():
        if opcode != "conditional":
            continue
        names = re.findall(r"%([\w.\-]+)", re.split(r"(?:true|branch)_computations?=", arguments)[0])[1:]
        for name in names:  # after the predicate (or branch index)
            inner, shape, inner_arguments = made[name]
            parts = re.findall(r"%([\w.\-]+)", inner_arguments) if inner == "tuple" else [name]
            operands.update(made[part][:2] for part in parts if SCALAR not in made[part][1])
    return operands


def hlo_of_step(optimizer, keras3_loop):
    """The HLO of one XLA-compiled step of TF 2.4's loop or Keras 3's, on two Dense layers under SGD with momentum."""
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])
    variables = model.trainable_variables

    @tf.function(jit_compile=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled = optimizer.scale_loss(loss) if keras3_loop else optimizer.get_scaled_loss(loss)
        grads = tape.gradient(scaled, variables)
        if not keras3_loop:
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    x, y = tf.ones((4, 4)), tf.ones((4, 1))
    step(x, y)
    return step.experimental_get_compiler_ir(x, y)(stage="hlo")


def sgd():
    return tf.keras.optimizers.SGD(0.01, momentum=0.9)


@pytest.fixture(scope="module")
def natives():
    """The operands of Keras 3's own class, in its own loop."""
    return conditional_tensor_operands(hlo_of_step(tf.keras.mixed_precision.LossScaleOptimizer(sgd()), True))


OURS = {
    "LossScaleOptimizer, TF 2.4 loop": (lambda: lossscale_compat.LossScaleOptimizer(sgd(), "dynamic"), False),
    "KerasLossScaleOptimizer, TF 2.4 loop": (lambda: lossscale_compat.KerasLossScaleOptimizer(sgd()), False),
    "KerasLossScaleOptimizer, Keras 3 loop": (lambda: lossscale_compat.KerasLossScaleOptimizer(sgd()), True),
}


@pytest.mark.parametrize("form", list(OURS))
def test_the_conditional_takes_no_tensor_keras3s_own_class_does_not(form, natives):
    make, keras3_loop = OURS[form]
    ours = conditional_tensor_operands(hlo_of_step(make(), keras3_loop))
    assert ours - natives == collections.Counter()


def test_the_operands_are_found(natives):
    """Should fail if the parsing saw no operand: the variables with their slots, and the gradients, are there."""
    assert sum(count for (opcode, _), count in natives.items() if opcode == "parameter") > 0
    assert sum(count for (opcode, _), count in natives.items() if opcode != "parameter") > 0


def overflowing_unscale(variable, large):
    """Two terms whose scaled gradients are finite at a scale of 2**-10, but whose sum overflows once unscaled."""
    term = tf.stack([large, 1.0, 1.0])
    return tf.reduce_sum(variable * term) + tf.reduce_sum(variable * term)


def overflowing_duplicates(variable, large):
    """IndexedSlices whose values are finite, but whose duplicate indices sum past float32's largest number."""
    return tf.reduce_sum(tf.gather(variable, [0, 0]) * tf.stack([large, 1.0, 1.0]))


CASES = {
    "unscaling overflows at a scale below 1": (overflowing_unscale, tf.ones(3), 3e38, 2.0**-10),
    "IndexedSlices with duplicate indices": (overflowing_duplicates, tf.ones((2, 3)), 2e38, 1.0),
}


def trained(case, keras3_loop, jit_compile):
    """What an overflowing step and then a finite one leave: the variable, scale, skipped steps and iterations."""
    loss_of, initial_value, large, initial_scale = CASES[case]
    variable = tf.Variable(initial_value)
    optimizer = lossscale_compat.KerasLossScaleOptimizer(sgd(), initial_scale=initial_scale)

    @tf.function(jit_compile=jit_compile)
    def step(large):
        with tf.GradientTape() as tape:
            loss = loss_of(variable, large)
            scaled = optimizer.scale_loss(loss) if keras3_loop else optimizer.get_scaled_loss(loss)
        grads = tape.gradient(scaled, [variable])
        if not keras3_loop:
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, [variable]))

    seen = []
    for value in (large, 2.0):
        step(tf.constant(value))
        seen.append([variable.numpy().tolist(), float(optimizer.loss_scale), int(optimizer.skipped_steps)])
    return seen


@pytest.mark.parametrize("keras3_loop", [False, True], ids=["TF 2.4 loop", "Keras 3 loop"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_vote_under_xla_is_the_vote_without_it(case, keras3_loop):
    """Under XLA the branch unscales the gradients again, but the vote is still on the unscaled ones, as TF 2.4's."""
    assert trained(case, keras3_loop, jit_compile=True) == trained(case, keras3_loop, jit_compile=False)
