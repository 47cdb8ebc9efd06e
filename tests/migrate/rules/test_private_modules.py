"""TF's private Keras mixed-precision modules imported as modules (issue 25): moved to lossscale_compat, or LSC110."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lossscale_compat import _mapping
from lossscale_compat.codemods import _target_names
from lossscale_compat.codemods import _warnings as w

from ..helpers import check
from ..helpers import check, migrate


BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])


def _recorded_private_objects() -> list[str]:
    """What TF 2.4.0's public mixed-precision names were, where that is in a private module we know of."""
    recorded = json.loads((ROOT / "tests" / "goldens" / "tf24_names.json").read_text())["2.4.0"]["names"]
    objects = {entry.get("import_object") or "" for entry in recorded.values()}
    return sorted(name for name in objects if name.rpartition(".")[0] in _mapping.PRIVATE_MODULES)


ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "statement",
    [
        "from tensorflow.python.keras.mixed_precision.experimental.autocast_variable import AutoCastVariable",
    ],
)
def test_import_from_tf24s_private_package_is_warned_even_under_a_guard(statement):
    source = f"""\
        import tensorflow as tf

        if tf.__version__.startswith("2.2."):
            {statement}
        """
    check(source, source, codes=[w.UNSUPPORTED_USE])


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
@pytest.mark.parametrize(
    "before, after",
    [
        (  # TF 2.4's own private modules
            "from tensorflow.python.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizerV1",
            "from lossscale_compat import LossScaleOptimizer as LossScaleOptimizerV1",
        ),
        (
            "from tensorflow.python.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer as LSO",
            "from lossscale_compat import KerasLossScaleOptimizer as LSO",
        ),
        (
            "from tensorflow.python.keras.mixed_precision.policy import PolicyV1",
            "from lossscale_compat import Policy as PolicyV1",
        ),
        (  # TF <= 2.3's experimental package
            "from tensorflow.python.keras.mixed_precision.experimental.loss_scale import get, serialize as ser",
            "from lossscale_compat import get, serialize as ser",
        ),
    ],
)
def test_private_import_of_a_name_lossscale_compat_provides_moves_to_it(before, after, target):
    body = "\n\nok = isinstance(o, tuple)\n"
    check(before + body, after + body, target, codes=[w.PRIVATE_IMPORT_NOTE])


@pytest.mark.parametrize(
    "statement",
    [
        # a name lossscale_compat lacks, with one it has: the statement stays whole
        "from tensorflow.python.keras.mixed_precision.experimental.loss_scale import get, LossScale",
        # the module itself, read for a name lossscale_compat lacks (test_private_modules.py: the moved ones)
        "from tensorflow.python.keras.mixed_precision.experimental import loss_scale\nbase = loss_scale.LossScale",
        # a policy's serialize is not the loss scale's
        "from tensorflow.python.keras.mixed_precision.experimental.policy import serialize",
    ],
)
def test_private_import_of_anything_else_in_the_experimental_package_stays_warned(statement):
    source = statement + "\n"
    check(source, source, codes=[w.UNSUPPORTED_USE])


def test_private_import_moved_to_lossscale_compat_runs():
    """The moved names exist, and TF 2.4's V1 class takes TF 2.4's arguments."""
    new, codes = migrate(
        "from tensorflow.python.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizerV1\n"
        "from tensorflow.python.keras.mixed_precision.loss_scale import get\n"
    )
    assert codes == [w.PRIVATE_IMPORT_NOTE] * 2
    tf = pytest.importorskip("tensorflow")
    namespace: dict = {}
    exec(compile(new, "t.py", "exec"), namespace)
    scale = namespace["get"](128)
    assert float(scale()) == 128.0
    opt = namespace["LossScaleOptimizerV1"](tf.keras.optimizers.SGD(0.1), scale)
    assert float(opt.loss_scale) == 128.0


@BOTH
def test_a_module_alias_whose_reads_lossscale_compat_provides_moves_with_a_note(target):
    check(
        """\
        from tensorflow.python.keras.mixed_precision import loss_scale_optimizer
        opt = loss_scale_optimizer.LossScaleOptimizer(inner)
        old = loss_scale_optimizer.LossScaleOptimizerV1(inner, 'dynamic')
        """,
        """\
        import lossscale_compat

        opt = lossscale_compat.KerasLossScaleOptimizer(inner)
        old = lossscale_compat.LossScaleOptimizer(inner, 'dynamic')
        """,
        target,
        codes=[w.PRIVATE_IMPORT_NOTE],
    )


@BOTH
def test_an_import_as_of_a_private_module_moves_with_a_note(target):
    check(
        """\
        import tensorflow.python.keras.mixed_precision.loss_scale as ls
        scale = ls.get('dynamic')
        config = ls.serialize(scale)
        """,
        """\
        import lossscale_compat

        scale = lossscale_compat.get('dynamic')
        config = lossscale_compat.serialize(scale)
        """,
        target,
        codes=[w.PRIVATE_IMPORT_NOTE],
    )


@BOTH
def test_tf23s_experimental_loss_scale_module_moves_too(target):
    check(
        """\
        from tensorflow.python.keras.mixed_precision.experimental import loss_scale as ls_module
        scale = ls_module.deserialize(config)
        """,
        """\
        import lossscale_compat

        scale = lossscale_compat.deserialize(config)
        """,
        target,
        codes=[w.PRIVATE_IMPORT_NOTE],
    )


@BOTH
@pytest.mark.parametrize(
    "source",
    [
        # `global_policy` of TF 2.4's private policy module: lossscale_compat has no such name
        "from tensorflow.python.keras.mixed_precision import policy as mp_policy\n"
        "p = mp_policy.PolicyV1('mixed_float16', loss_scale='dynamic')\n"
        "q = mp_policy.global_policy()\n",
        # the module itself is used as a value
        "from tensorflow.python.keras.mixed_precision import loss_scale_optimizer\nregister(loss_scale_optimizer)\n",
        # a plain dotted import: the uses spell the whole path
        "import tensorflow.python.keras.mixed_precision.loss_scale_optimizer\n",
        # a private module of no mapped name
        "from tensorflow.python.keras.mixed_precision import autocast_variable\n",
        # a function-local import
        "def f():\n    from tensorflow.python.keras.mixed_precision import loss_scale_optimizer as lso\n"
        "    return lso.LossScaleOptimizer\n",
    ],
)
def test_a_private_module_import_that_cannot_move_is_warned_not_left_silently(source, target):
    check(source, source, target, codes=[w.UNSUPPORTED_USE])


def test_tf23s_experimental_modules_with_rows_are_sites_and_their_import_is_not_warned():
    """`import ...experimental.loss_scale_optimizer as lso`: its uses are rewritten and the import dropped."""
    check(
        """\
        import tensorflow.python.keras.mixed_precision.experimental.loss_scale_optimizer as lso
        opt = lso.LossScaleOptimizer(inner, 'dynamic')
        """,
        """\
        import keras

        opt = keras.mixed_precision.LossScaleOptimizer(inner)
        """,
    )


def test_tf_2_4_0s_recording_names_objects_of_the_private_modules():
    assert len(_recorded_private_objects()) >= 4, _recorded_private_objects()


@pytest.mark.parametrize("name", _recorded_private_objects())
def test_each_recorded_object_of_a_private_module_is_moved_exactly_when_lossscale_compat_provides_it(name):
    """TF 2.4.0 had `policy.global_policy`, `policy.set_policy` (recorded): not ours, so their module is warned."""
    module, _, attribute = name.rpartition(".")
    package, _, short = module.rpartition(".")
    source = f"from {package} import {short} as private\nvalue = private.{attribute}\n"
    if name in _mapping.PRIVATE_NAMES:
        new_module, _, new_short = _mapping.PRIVATE_NAMES[name].rpartition(".")
        check(source, f"import {new_module}\n\nvalue = {new_module}.{new_short}\n", codes=[w.PRIVATE_IMPORT_NOTE])
    elif module in _mapping.PRIVATE_MODULES_KEPT:
        check(source, source, codes=[])  # the targets still have the module and this name (TF1's loss scales)
    else:
        # Where today's private module lacks the attribute (recorded, codemods/target_names/), the verifier warns it.
        left = [w.NAME_LEFT] if _target_names.lacking("keras3", name) else []
        check(source, source, codes=[w.UNSUPPORTED_USE, *left])
