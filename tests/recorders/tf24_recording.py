"""What the loss-scale and optimizer recorders set up first: CPU only, TF 2.4.0, two logical CPUs.

Importing it makes tests/goldens/ (the data, and `specs`) importable and checks that the running
TensorFlow is 2.4.0, so goldens never come from another version. Keep it Python 3.8 compatible.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import tensorflow as tf  # noqa: E402

GOLDENS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "goldens")
sys.path.insert(0, GOLDENS)

assert tf.__version__ == "2.4.0", "goldens must come from TF 2.4.0, not %s" % tf.__version__

# Two logical CPUs, for the MirroredStrategy cases (as the tests' conftest.py sets up too).
_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    _cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])


def write_goldens(name, recorder, data):
    """Writes `data` with TF 2.4.0's version stamp to tests/goldens/`name`, as every recorder's JSON is kept."""
    meta = {
        "tensorflow": tf.__version__,
        "git_version": tf.version.GIT_VERSION,
        "python": sys.version.split()[0],
        "recorded_by": "tests/recorders/" + recorder,
    }
    path = os.path.join(GOLDENS, name)
    with open(path, "w") as f:
        json.dump(dict(data, meta=meta), f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", path)
