"""rules/policy: `Policy(name, loss_scale=...)`, `set_policy`, the global policy's `loss_scale` and
`get_layer_policy` (before/after strings per target)."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate


BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])


@pytest.mark.parametrize(
    "target, policy",
    [("keras3", "DTypePolicy"), ("tf_keras", "Policy")],
)
def test_policy_and_set_policy(target, policy):
    check(
        """\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.set_policy(
            tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale='dynamic'))
        p = tf.keras.mixed_precision.experimental.global_policy()
        """,
        f"""\
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy(
            tf.keras.mixed_precision.{policy}('mixed_float16'))
        p = tf.keras.mixed_precision.global_policy()
        """,
        target,
    )


def test_policy_fixed_loss_scale_goes_to_the_run_time_fallback():
    check(
        "import tensorflow as tf\np = tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=128)\n",
        "import tensorflow as tf\nimport lossscale_compat\n\np = lossscale_compat.Policy('mixed_float16', loss_scale=128)\n",
        codes=[w.POLICY_FALLBACK_NOTE],
    )


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_policy_whose_loss_scale_is_read_goes_to_the_run_time_fallback(target):
    """The modern policy has no `loss_scale`: a Policy the module reads it from keeps TF 2.4's class (LSC135)."""
    modern = "keras.mixed_precision.DTypePolicy" if target == "keras3" else "tensorflow.keras.mixed_precision.Policy"
    new, codes = migrate(
        """\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        policy = mixed_precision.Policy('mixed_float16')
        print(policy.loss_scale)
        other = mixed_precision.Policy('float32')
        print(other.compute_dtype)
        """,
        target,
    )
    assert "policy = lossscale_compat.Policy('mixed_float16')\n" in new
    assert f"other = {modern}('float32')\n" in new
    assert "experimental" not in new
    assert codes == [w.POLICY_FALLBACK_NOTE]


@pytest.mark.parametrize("set_by_name", [False, True])
def test_global_policy_loss_scale_read_is_warned_only_where_a_policy_set_may_lack_one(set_by_name):
    """Every Policy of a module that reads `global_policy().loss_scale` keeps TF 2.4's class; a policy set by name
    would be the target's, which has no loss scale, so the read is warned then (LSC106)."""
    source = f"""\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.set_policy({"'mixed_float16'" if set_by_name else "tf.keras.mixed_precision.experimental.Policy('mixed_float16')"})
        print(tf.keras.mixed_precision.experimental.global_policy().loss_scale)
        """
    new, codes = migrate(source)
    assert "experimental" not in new
    assert "global_policy().loss_scale" in new
    if set_by_name:
        assert codes == [w.POLICY_LOSS_SCALE]
    else:
        assert "lossscale_compat.Policy('mixed_float16')" in new
        assert codes == [w.POLICY_FALLBACK_NOTE]


def test_get_layer_policy():
    check(
        "import tensorflow as tf\np = tf.keras.mixed_precision.experimental.get_layer_policy(model.layers[0])\n",
        "import tensorflow as tf\np = model.layers[0].dtype_policy\n",
    )


def test_get_layer_policy_from_tf23s_private_module_of_its_own():
    """TF <= 2.3 kept get_layer_policy in its own private module, not in `policy` (checked on TF 2.3.0)."""
    check(
        """\
        from tensorflow.python.keras.mixed_precision.experimental import get_layer_policy
        from tensorflow.python.keras.mixed_precision.experimental import policy
        p = get_layer_policy.get_layer_policy(layer)
        policy.set_policy("mixed_float16")
        """,
        """\
        import keras

        p = layer.dtype_policy
        keras.mixed_precision.set_global_policy("mixed_float16")
        """,
    )


@pytest.mark.parametrize(
    "policy",
    [
        "Policy('mixed_float16', loss_scale=128)",
        "Policy('mixed_float16', loss_scale=tf.mixed_precision.experimental.FixedLossScale(128))",
        "Policy('mixed_float16', loss_scale={'class_name': 'FixedLossScale', 'config': {'loss_scale_value': 128}})",
        "Policy('mixed_float16', loss_scale=None)",
        "Policy('float32', loss_scale=128)",
    ],
)
@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_policy_with_explicit_non_dynamic_loss_scale_goes_to_the_run_time_fallback(policy, target):
    """Which models' compile() the loss scale reaches is not provable (docs/codemod.md), so TF 2.4's Policy decides
    it at run time: lossscale_compat.Policy with the same arguments."""
    source = f"""\
        import tensorflow as tf
        policy = tf.keras.mixed_precision.experimental.{policy}
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, dtype=policy)])
        model.compile(tf.keras.optimizers.SGD(0.1), loss='mse')
        """
    new, codes = migrate(source, target)
    assert (
        f"policy = lossscale_compat.{policy.replace('tf.mixed_precision.experimental.', 'lossscale_compat.')}\n" in new
    )
    assert "experimental" not in new
    assert codes[0] == w.POLICY_FALLBACK_NOTE
    assert set(codes[1:]) <= {w.SHIM_NOTE}


# ---------------------------------------------------------------- gap F: Policy(<run-time name>, loss_scale=None)
@BOTH
def test_policy_of_a_run_time_name_without_loss_scale_goes_to_the_run_time_fallback(target):
    """`loss_scale=None` under a name known only at run time: no loss scaling at `compile` if it is mixed_float16,
    which only TF 2.4's Policy keeps (LSC135); the call without a loss scale is the modern policy."""
    policy = "DTypePolicy" if target == "keras3" else "Policy"
    check(
        """\
        import tensorflow as tf

        def set_precision(policy_name, loss_scale):
            if loss_scale:
                policy = tf.keras.mixed_precision.experimental.Policy(policy_name)
            else:
                policy = tf.keras.mixed_precision.experimental.Policy(policy_name, loss_scale=None)
            tf.keras.mixed_precision.experimental.set_policy(policy)
        """,
        f"""\
        import tensorflow as tf
        import lossscale_compat

        def set_precision(policy_name, loss_scale):
            if loss_scale:
                policy = tf.keras.mixed_precision.{policy}(policy_name)
            else:
                policy = lossscale_compat.Policy(policy_name, loss_scale=None)
            tf.keras.mixed_precision.set_global_policy(policy)
        """,
        target,
        codes=[w.POLICY_FALLBACK_NOTE],
    )


@pytest.mark.parametrize("scale", ["FLAGS.loss_scale", "128", "'dynamic'"])
def test_policy_of_a_run_time_name_with_another_loss_scale_goes_to_the_run_time_fallback(scale):
    check(
        f"import tensorflow as tf\np = tf.keras.mixed_precision.experimental.Policy(name, loss_scale={scale})\n",
        f"import tensorflow as tf\nimport lossscale_compat\n\np = lossscale_compat.Policy(name, loss_scale={scale})\n",
        codes=[w.POLICY_FALLBACK_NOTE],
    )


@BOTH
def test_get_layer_policy_as_a_value_or_with_star_args_names_lossscale_compats(target):
    check(
        """\
        import tensorflow as tf
        describe = tf.keras.mixed_precision.experimental.get_layer_policy
        policy = tf.keras.mixed_precision.experimental.get_layer_policy(*layers)
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        describe = lossscale_compat.keras_experimental.get_layer_policy
        policy = lossscale_compat.keras_experimental.get_layer_policy(*layers)
        """,
        target,
        codes=[w.VALUE_FALLBACK_NOTE, w.VALUE_FALLBACK_NOTE],
    )


@pytest.mark.parametrize(
    "call", ["Policy('mixed_float16', loss_scale=scale)", "Policy('mixed_float16', 128)", "Policy(*args)"]
)
def test_a_policy_alias_called_with_a_loss_scale_names_lossscale_compats(call):
    check(
        f"""\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        Policy = mixed_precision.Policy
        policy = {call}
        """,
        f"""\
        import lossscale_compat

        Policy = lossscale_compat.Policy
        policy = {call}
        """,
        codes=[w.VALUE_FALLBACK_NOTE],
    )


def test_a_policy_alias_called_without_a_loss_scale_names_the_modern_class():
    check(
        """\
        import tensorflow as tf
        Policy = tf.keras.mixed_precision.experimental.Policy
        policy = Policy('mixed_float16')
        """,
        """\
        import tensorflow as tf
        Policy = tf.keras.mixed_precision.DTypePolicy
        policy = Policy('mixed_float16')
        """,
    )


@BOTH
@pytest.mark.parametrize("arguments", ["*args", "'mixed_float16', **kwargs", "name, *rest, loss_scale=128"])
def test_a_policy_built_with_star_args_is_left_alone_and_warned(arguments, target):
    """The loss scale `*args`/`**kwargs` may carry cannot be read, so no class can be chosen for it (LSC105)."""
    source = f"import tensorflow as tf\np = tf.keras.mixed_precision.experimental.Policy({arguments})\n"
    check(source, source, target, codes=[w.STAR_ARGS])
