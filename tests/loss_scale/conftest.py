"""Sets up TensorFlow for the loss-scale tests: quiet logs and 2 logical CPUs for MirroredStrategy."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

# Must happen before TensorFlow initialises its devices, i.e. before any test runs an op.
_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    _cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
