"""Test-wide set-up: the goldens' helpers and warm_python on sys.path, and 2 logical CPUs for MirroredStrategy."""

import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "goldens"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # tests/warm_python.py
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

try:
    import tensorflow as tf
except ImportError:  # the codemod tests run without TensorFlow
    tf = None

if tf is not None:
    # Must happen before TensorFlow initialises its devices, i.e. before any test runs an op.
    _cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        _cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])


if tf is not None:
    import pytest

    def pytest_runtest_setup(item):
        """Skips a `tf_checkpoint` test where Keras's optimizers cannot be in a TF checkpoint (a feature test)."""
        if item.get_closest_marker("tf_checkpoint") is None:
            return
        from lossscale_compat import _flavour

        if not _flavour.keras_optimizers_are_trackable():
            pytest.skip(
                f"Keras {_flavour.keras_version()}'s optimizers are not TensorFlow trackables (Keras 3.0; 3.1 made them "
                "so), and no adapter can put their slots in a TF checkpoint; ours refuses with a clear ValueError "
                "(tests/optimizer/test_errors.py)")

    @pytest.fixture(scope="session")
    def mirrored():
        """One 2-replica MirroredStrategy for the whole run, as TF's collectives need (and as recorded)."""
        return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


# Our own pytest plugin (also installed through the `pytest11` entry point), pytest's, to test it, and the skip audit
# (tests/skip_reasons.py: a skip for an unlisted reason fails).
pytest_plugins = ("lossscale_compat.pytest_plugin", "pytester", "skip_reasons")

