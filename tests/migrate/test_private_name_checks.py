"""A private loss-scale optimizer class from-imported by name (`_import_plan.plan_private_imports`): read only by
`isinstance`/`issubclass`, it becomes the name that answers for every loss-scale optimizer; also called, it stays
lossscale_compat's class and each check is left to a person (LSC110)."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from .helpers import check

BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])
PRIVATE = "tensorflow.python.keras.mixed_precision.loss_scale_optimizer"
MODULES = pytest.mark.parametrize(
    "module",
    # TF 2.4's private module, and standalone Keras 2's, which a public NeRF trainer imported the class from
    # (code index id 23360734900) to wrap its Adam in a method
    [PRIVATE, "keras.mixed_precision.loss_scale_optimizer"],
)


@BOTH
@MODULES
@pytest.mark.parametrize("name", ["LossScaleOptimizer", "LossScaleOptimizerV1"])
def test_a_class_only_checked_becomes_the_class_every_loss_scale_optimizer_passes(target, module, name):
    """Before, it became lossscale_compat's class, and the check was False for the target's own optimizer."""
    check(
        f"""\
        from {module} import {name}

        def wrapped(opt):
            return isinstance(opt, (list, {name})) or issubclass(type(opt), {name})
        """,
        f"""\
        from lossscale_compat import AnyLossScaleOptimizer as {name}

        def wrapped(opt):
            return isinstance(opt, (list, {name})) or issubclass(type(opt), {name})
        """,
        target,
        codes=[w.PRIVATE_IMPORT_NOTE],
    )


@BOTH
def test_a_class_also_called_stays_ours_and_its_check_is_warned(target):
    check(
        f"""\
        from {PRIVATE} import LossScaleOptimizer as LSO

        opt = LSO(inner)
        assert isinstance(opt, LSO)
        """,
        """\
        from lossscale_compat import KerasLossScaleOptimizer as LSO

        opt = LSO(inner)
        assert isinstance(opt, LSO)
        """,
        target,
        codes=[w.PRIVATE_IMPORT_NOTE, w.UNSUPPORTED_USE],
    )


@BOTH
@MODULES
def test_a_class_only_called_stays_ours(target, module):
    check(
        f"""\
        from {module} import LossScaleOptimizer

        class Run:
            def optimizer(self, rate):
                return LossScaleOptimizer(Adam(rate))
        """,
        """\
        from lossscale_compat import KerasLossScaleOptimizer as LossScaleOptimizer

        class Run:
            def optimizer(self, rate):
                return LossScaleOptimizer(Adam(rate))
        """,
        target,
        codes=[w.PRIVATE_IMPORT_NOTE],
    )


@BOTH
def test_a_rebound_isinstance_is_no_class_check(target):
    """`isinstance` bound by the module is not the built-in: the class stays ours."""
    check(
        f"""\
        from {PRIVATE} import LossScaleOptimizer

        def isinstance(a, b):
            return False

        ok = isinstance(o, LossScaleOptimizer)
        """,
        """\
        from lossscale_compat import KerasLossScaleOptimizer as LossScaleOptimizer

        def isinstance(a, b):
            return False

        ok = isinstance(o, LossScaleOptimizer)
        """,
        target,
        codes=[w.PRIVATE_IMPORT_NOTE],
    )
