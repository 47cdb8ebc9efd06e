"""The unseen corpus (issue 30), migrated, imports and runs its mixed-precision functions on this stack: no name the
codemod left (scoped imports, compat roots, private device checks) fails where the migrated file runs."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
from lossscale_compat.codemods import migrate_source

pytest.importorskip("tensorflow")  # the codemod's own CI sessions (nox -s codemod-libcst) run without TensorFlow

UNSEEN = pathlib.Path(__file__).parent / "unseen"

RUN = """\
import tensorflow as tf
import garden_performance, horovod_compat_check, resnet_ctl_runner

opt = tf.keras.optimizers.SGD(0.1)
garden_performance.configure_optimizer(opt, use_float16=True)
garden_performance.set_mixed_precision_policy(tf.bfloat16)
horovod_compat_check.wrap_for_fp16(tf.keras.optimizers.SGD(0.1))
resnet_ctl_runner.set_precision("fp16", "dynamic")
resnet_ctl_runner.build_optimizer(0.9)
print("ran")
"""


def _target() -> str:
    """The target this stack runs: tf.keras is Keras 2 on TF 2.15 or with TF_USE_LEGACY_KERAS=1."""
    import tensorflow as tf

    return "tf_keras" if not hasattr(tf.keras.mixed_precision.LossScaleOptimizer, "scale_loss") else "keras3"


def test_the_migrated_unseen_files_import_and_run(tmp_path):
    target = _target()
    for path in sorted(UNSEEN.glob("*.py")):
        result = migrate_source(path.read_bytes(), target, str(path))
        assert result.status == "changed", result.error
        (tmp_path / path.name).write_bytes(result.new)
    done = subprocess.run(
        [sys.executable, "-c", RUN],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(tmp_path)),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ran")
