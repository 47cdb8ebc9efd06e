"""tests/warm_python.py runs a program as `python` would: its own argv, path, exit code and output, and no state left
by the program before it."""

import os
import sys

import pytest

pytest.importorskip("tensorflow")
from warm_python import warm_python

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")

PROGRAM = """\
import sys
import tensorflow as tf
import neighbour

print(__name__, sys.argv[1:], neighbour.NAME, tf.keras.mixed_precision.global_policy().name)
tf.keras.mixed_precision.set_global_policy("mixed_float16")
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


def test_a_program_runs_as_python_runs_it_each_time_from_a_fresh_state(tmp_path):
    (tmp_path / "program.py").write_text(PROGRAM)
    (tmp_path / "neighbour.py").write_text("NAME = 'beside the program'\n")
    server = warm_python(ENV)
    assert server.preload_error is None
    for code in (3, 0):  # the first run's global policy must not reach the second
        done = server.run([str(tmp_path / "program.py"), str(code)], cwd=tmp_path)
        assert done.returncode == code and done.stderr.endswith("to stderr\n")  # after Keras 2's GPU warning
        assert done.stdout == f"__main__ ['{code}'] beside the program float32\n"


def test_module_and_command_forms_and_an_uncaught_error(tmp_path):
    server = warm_python(ENV)
    done = server.run(["-m", "lossscale_compat"], cwd=tmp_path)
    cold = __import__("subprocess").run([sys.executable, "-m", "lossscale_compat"], cwd=tmp_path, env=ENV,
                                        capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (cold.returncode, cold.stdout)
    done = server.run(["-c", "import sys; print(sys.argv); raise ValueError('lost')", "x"], cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "['-c', 'x']\n"
    assert done.stderr.strip().endswith("ValueError: lost")


def test_an_environment_without_its_keras_runs_programs_cold(tmp_path):
    """TF_USE_LEGACY_KERAS=1 where tf_keras is missing: no warm server, and programs fail as `python` fails them."""
    pytest.importorskip("keras")
    try:
        import tf_keras  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("tf_keras is installed here, so the legacy switch imports it")
    server = warm_python({**ENV, "TF_USE_LEGACY_KERAS": "1"})
    assert server.preload_error is not None and "Keras" in server.preload_error
    done = server.run(["-c", "import tensorflow as tf; tf.keras.optimizers"], cwd=tmp_path)
    assert done.returncode == 1 and "Error" in done.stderr
