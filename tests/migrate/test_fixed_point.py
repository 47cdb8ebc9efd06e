"""One pass is enough (issue 25): a second migration of the codemod's own output changes nothing, on every real file
we have (examples/tf24, tests/migrate/corpus and tests/migrate/corpus_public) and on the GAN runner shape that once needed two passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._engine import migrate_source

from .helpers import check

ROOT = Path(__file__).resolve().parents[2]
REAL_FILES = sorted(
    path
    for folder in (ROOT / "examples" / "tf24", ROOT / "tests" / "migrate" / "corpus", ROOT / "tests" / "migrate" / "corpus_public")
    for path in folder.glob("*.py")
    if not path.name.startswith("_")
)
BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])


def test_the_real_files_are_found():
    assert len(REAL_FILES) >= 15, REAL_FILES


@BOTH
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_a_second_migration_of_a_real_file_changes_nothing(path, target):
    first = migrate_source(path.read_bytes(), target, str(path))
    assert first.status in ("changed", "unchanged"), first.error
    second = migrate_source(first.new, target, str(path))
    assert second.status == "unchanged", second.new.decode()
    assert second.new == first.new



@BOTH
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_a_second_migration_of_a_real_file_warns_nothing_the_first_did_not(path, target):
    """What is left for a person is said on the first pass: a note that appears only on the codemod's own output (as
    LSC143 once did on a class held as a value, `wrapper_class = lossscale_compat.KerasLossScaleOptimizer`) would
    reach a user only after a second run."""
    first = migrate_source(path.read_bytes(), target, str(path))
    second = migrate_source(first.new, target, str(path))
    assert {f.code for f in second.findings} <= {f.code for f in first.findings}

def test_gan_runner_graph_rewrite_on_an_attribute_used_by_another_method_is_built_for_that_loop_in_one_pass():
    """`self.generator_optimizer = enable_mixed_precision_graph_rewrite(Adam(...))` with its loop (which logs the
    unscaled gradients) in another method: the wrap is lossscale_compat's class, which keeps the loop's methods; once
    Keras 3's class was written here while the loop stayed, and only a second pass rewrote the loop."""
    check(
        """\
        import tensorflow as tf
        from tensorflow.train.experimental import enable_mixed_precision_graph_rewrite


        class Runner:
            def __init__(self, gen_opt):
                self.discriminator_optimizer = enable_mixed_precision_graph_rewrite(gen_opt)
                self.generator_optimizer = enable_mixed_precision_graph_rewrite(tf.keras.optimizers.Adam(1e-4))

            def step(self, tape, loss, variables):
                scaled = self.generator_optimizer.get_scaled_loss(loss)
                grads = tape.gradient(scaled, variables)
                grads = self.generator_optimizer.get_unscaled_gradients(grads)
                tf.print(grads)
                self.generator_optimizer.apply_gradients(zip(grads, variables))
        """,
        """\
        import tensorflow as tf
        import lossscale_compat


        class Runner:
            def __init__(self, gen_opt):
                self.discriminator_optimizer = lossscale_compat.enable_mixed_precision_graph_rewrite(gen_opt)
                self.generator_optimizer = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.Adam(1e-4))

            def step(self, tape, loss, variables):
                scaled = self.generator_optimizer.get_scaled_loss(loss)
                grads = tape.gradient(scaled, variables)
                grads = self.generator_optimizer.get_unscaled_gradients(grads)
                tf.print(grads)
                self.generator_optimizer.apply_gradients(zip(grads, variables))
        """,
        # `self.generator_optimizer` is traced (set once in the class): LSC126 says the loop logs its gradients.
        codes=[w.GRAPH_REWRITE_FALLBACK_NOTE, w.GRAPH_REWRITE_NOTE, w.LOOP_SHIM_NOTE, w.GRADIENTS_LOGGED],
    )
