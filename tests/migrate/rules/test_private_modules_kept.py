"""Issue 30, pattern 3: TF 2.3's `get_loss_scale_weights` (a private module the targets still have) and standalone
Keras 2's `keras.mixed_precision.loss_scale_optimizer` move to lossscale_compat (LSC140), never left as LSC150."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from lossscale_compat import _mapping
from lossscale_compat.codemods import _engine, _prefilter
from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate

BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])
GOLDEN = Path(__file__).resolve().parents[2] / "goldens" / "tf24_loss_scale_weights.json"

WEIGHTS_CASES = [
    pytest.param(
        """\
        from tensorflow.python.training.experimental.loss_scale import get_loss_scale_weights

        for weight in get_loss_scale_weights(scale):
            track(weight)
        """,
        """\
        from lossscale_compat import get_loss_scale_weights

        for weight in get_loss_scale_weights(scale):
            track(weight)
        """,
        id="from-import",
    ),
    pytest.param(
        """\
        from tensorflow.python.training.experimental import loss_scale as loss_scale_module

        weights = loss_scale_module.get_loss_scale_weights(scale)
        """,
        """\
        import lossscale_compat

        weights = lossscale_compat.get_loss_scale_weights(scale)
        """,
        id="module",
    ),
    pytest.param(
        """\
        import tensorflow.python.training.experimental.loss_scale as lsm

        weights = lsm.get_loss_scale_weights(scale)
        """,
        """\
        import lossscale_compat

        weights = lossscale_compat.get_loss_scale_weights(scale)
        """,
        id="import-as",
    ),
    pytest.param(
        """\
        from tensorflow.python.training.experimental import loss_scale as loss_scale_module

        scale = loss_scale_module.FixedLossScale(128)
        weights = loss_scale_module.get_loss_scale_weights(scale)
        """,
        """\
        from tensorflow.python.training.experimental import loss_scale as loss_scale_module
        import lossscale_compat

        scale = loss_scale_module.FixedLossScale(128)
        weights = lossscale_compat.get_loss_scale_weights(scale)
        """,
        id="module-kept-for-its-other-names",
    ),
]

KERAS2_CASES = [
    pytest.param(
        "from keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizerV1\n"
        "opt = LossScaleOptimizerV1(inner, 'dynamic')\n",
        "from lossscale_compat import LossScaleOptimizer as LossScaleOptimizerV1\n"
        "opt = LossScaleOptimizerV1(inner, 'dynamic')\n",
        id="from-import-v1",
    ),
    pytest.param(
        "from keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer as LSO\nopt = LSO(inner)\n",
        "from lossscale_compat import KerasLossScaleOptimizer as LSO\nopt = LSO(inner)\n",
        id="from-import",
    ),
    pytest.param(
        "from keras.mixed_precision import loss_scale_optimizer\nopt = loss_scale_optimizer.LossScaleOptimizer(inner)\n",
        "import lossscale_compat\n\nopt = lossscale_compat.KerasLossScaleOptimizer(inner)\n",
        id="module",
    ),
    pytest.param(
        "import keras.mixed_precision.loss_scale_optimizer as lso\n"
        "ok = isinstance(opt, (int, lso.LossScaleOptimizerV1))\n"
        "opt = lso.LossScaleOptimizer(inner)\n",
        "import lossscale_compat\n\n"
        "ok = isinstance(opt, (int, lossscale_compat.AnyLossScaleOptimizer))\n"
        "opt = lossscale_compat.KerasLossScaleOptimizer(inner)\n",
        id="class-check-answers-for-every-loss-scale-optimizer",
    ),
    pytest.param(
        "import os\nfrom keras.mixed_precision import loss_scale_optimizer\nx = 1\n", "import os\nx = 1\n", id="unused"
    ),
]


@BOTH
@pytest.mark.parametrize("before, after", WEIGHTS_CASES + KERAS2_CASES)
def test_moved_to_lossscale_compat(before, after, target):
    check(before, after, target, codes=[w.PRIVATE_IMPORT_NOTE])


@BOTH
def test_the_kept_module_without_the_lacking_name_is_left_alone(target):
    source = "from tensorflow.python.training.experimental import loss_scale\nscale = loss_scale.get(2)\n"
    check(source, source, target, codes=[])
    assert not _prefilter.may_match(source.encode(), target)  # never parsed


@BOTH
def test_another_name_of_keras_2s_module_is_warned(target):
    source = "import keras.mixed_precision.loss_scale_optimizer as lso\nbase = lso.BaseLossScaleOptimizer\n"
    check(source, source, target, codes=[w.UNSUPPORTED_USE])


@BOTH
def test_a_loop_checked_for_keras_2s_standalone_class_checks_every_loss_scale_optimizer(target):
    """Was LSC150 at the import (test_custom_loop_untraced): the check now answers for the target's class too."""
    before = """\
        from keras.mixed_precision import loss_scale_optimizer

        def train_step(model, tape, loss, variables):
            with tape:
                if isinstance(model.optimizer, loss_scale_optimizer.LossScaleOptimizer):
                    loss = model.optimizer.get_scaled_loss(loss)
            grads = tape.gradient(loss, variables)
            model.optimizer.apply_gradients(zip(grads, variables))
        """
    after = before.replace("from keras.mixed_precision import loss_scale_optimizer", "import lossscale_compat")
    after = after.replace("loss_scale_optimizer.LossScaleOptimizer", "lossscale_compat.AnyLossScaleOptimizer")
    loop = [w.RECEIVER_NOT_PROVEN] if target == "keras3" else []
    check(before, after, target, codes=[w.PRIVATE_IMPORT_NOTE, *loop])


@pytest.mark.parametrize("name", sorted(n for n in _mapping.PRIVATE_NAMES if not n.startswith("tensorflow.python.keras")))
@pytest.mark.parametrize("spelling", ["from-import", "module", "import-as"])
@BOTH
def test_every_spelling_passes_the_prefilter(name, spelling, target):
    module, _, last = name.rpartition(".")
    package, _, short = module.rpartition(".")
    source = {
        "from-import": f"from {module} import {last}\nx = {last}\n",
        "module": f"from {package} import {short} as m\nx = m.{last}\n",
        "import-as": f"import {module} as m\nx = m.{last}\n",
    }[spelling].encode()
    assert _prefilter.may_match(source, target)
    assert _prefilter.may_match_ast(source, target)
    assert b"lossscale_compat" in _engine.migrate_source(source, target).new


@BOTH
def test_keras_2s_own_private_tree_is_not_parsed_for_it(target):
    """`keras.src`'s module (Keras 2.13+) is the target's own: the bytes pass, the `ast` test stops it."""
    source = b"from keras.src.mixed_precision import loss_scale_optimizer\nx = loss_scale_optimizer.LossScaleOptimizer\n"
    assert _prefilter.may_match(source, target)
    assert not _prefilter.may_match_ast(source, target)


def test_the_migrated_call_gives_tf_2_3s_weights():
    """The migrated file runs on today's TensorFlow and gives what TF 2.3.0 gave (golden)."""
    pytest.importorskip("tensorflow")
    before = """\
        import warnings
        from tensorflow.python.training.experimental import loss_scale as loss_scale_module
        import lossscale_compat

        warnings.simplefilter("ignore", DeprecationWarning)
        scale = lossscale_compat.DynamicLossScale()
        names = [(v.name, v.numpy().item()) for v in loss_scale_module.get_loss_scale_weights(scale)]
        """
    new, codes = migrate(before)
    assert codes == [w.PRIVATE_IMPORT_NOTE] and "loss_scale_module" not in new
    namespace: dict = {}
    exec(compile(textwrap.dedent(new), "migrated.py", "exec"), namespace)
    expected = json.loads(GOLDEN.read_text())["2.3.0"]["cases"]["dynamic_default"]["weights"]
    assert namespace["names"] == [(weight["name"], weight["value"]) for weight in expected]
