"""The pytest plugin: fixtures, a key-by-key diff for failed equivalence, and no TensorFlow at start-up."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLUGIN = "lossscale_compat.pytest_plugin"


def test_the_entry_point_names_the_plugin_module():
    """Named as the module, so `-p` and `pytest_plugins` find the entry-point plugin loaded already."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {PLUGIN: PLUGIN}
    assert project["optional-dependencies"]["pytest"] == ["pytest>=7"]


def test_fixtures_and_a_key_by_key_diff(pytester):
    pytester.makepyfile(textwrap.dedent("""
        import tensorflow as tf
        import lossscale_compat

        SGD = tf.keras.optimizers.SGD

        def test_fixtures(assert_config_equivalent, assert_behaviour_equivalent, modern_equivalent):
            old = lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), lossscale_compat.DynamicLossScale(8, 3))
            assert_config_equivalent(old(), modern_equivalent(old()))
            assert_behaviour_equivalent(old, lambda: lossscale_compat.KerasLossScaleOptimizer(
                SGD(0.1), initial_scale=8, dynamic_growth_steps=3))

        def test_diff(config_summary):
            old = lossscale_compat.KerasLossScaleOptimizer(SGD(0.1), initial_scale=4)
            new = lossscale_compat.KerasLossScaleOptimizer(SGD(0.2), initial_scale=8)
            assert config_summary(old) == config_summary(new)
    """))
    result = pytester.runpytest_subprocess("-p", PLUGIN)  # its own process: no state shared with an xdist worker
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "E       assert the optimizers are not equivalent:",
        "E         initial_scale: 4.0 (old) != 8.0 (new)",
        "E         inner_optimizer.learning_rate: 0.1 (old) != 0.2 (new)",
    ])


def test_equal_summaries_pass_and_other_comparisons_are_left_to_pytest(pytester):
    pytester.makepyfile(textwrap.dedent("""
        import tensorflow as tf
        import lossscale_compat

        def test_equal(config_summary):
            old = lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")
            assert config_summary(old) == config_summary(tf.keras.mixed_precision.LossScaleOptimizer(
                tf.keras.optimizers.SGD()))

        def test_other():
            assert {"a": 1} == {"a": 2}
    """))
    result = pytester.runpytest_subprocess("-p", PLUGIN)  # its own process: no state shared with an xdist worker
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*Differing items:*"])
    result.stdout.no_fnmatch_line("*not equivalent*")


def test_pytest_start_up_imports_no_tensorflow(tmp_path):
    """Loading the plugin (as every pytest run of its users does) stays cheap, and warns about nothing."""
    (tmp_path / "test_start.py").write_text(textwrap.dedent("""
        import sys

        def test_no_tensorflow(request):
            assert request.config.pluginmanager.has_plugin("lossscale_compat.pytest_plugin")
            assert "tensorflow" not in sys.modules
            assert "keras" not in sys.modules
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", PLUGIN, "-W", "error", "-q", "-p", "no:cacheprovider",
                           str(tmp_path / "test_start.py")], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
