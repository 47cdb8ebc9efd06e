"""`lossscale-compat run`, `python -m lossscale_compat run` and LOSSSCALE_COMPAT_LEGACY=1, in child processes."""

import os
import subprocess
import sys

import pytest

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
ENV.pop("LOSSSCALE_COMPAT_LEGACY", None)


def python(*args, env=ENV, cwd=None):
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def lossscale_compat_run(*args, cwd=None):
    return python("-m", "lossscale_compat", "run", *args, cwd=cwd)


def test_no_arguments_is_a_one_line_usage_error():
    done = lossscale_compat_run()
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "usage: lossscale-compat run" in done.stderr


def test_a_missing_script_is_a_one_line_error(tmp_path):
    done = lossscale_compat_run(str(tmp_path / "nope.py"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"lossscale-compat run: no such script: {tmp_path / 'nope.py'}"]


def test_argv_exit_code_and_sibling_imports_pass_through(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 'sibling'\n")
    (tmp_path / "train.py").write_text(
        "import sys\nimport helper\nprint(__name__, sys.argv, helper.VALUE)\nsys.exit(3)\n")
    done = lossscale_compat_run(str(tmp_path / "train.py"), "--epochs", "2")
    assert done.returncode == 3
    assert done.stdout.strip() == f"__main__ {[str(tmp_path / 'train.py'), '--epochs', '2']} sibling"


def test_a_module_runs_as_main(tmp_path):
    (tmp_path / "trainer.py").write_text("import sys\nprint(__name__, sys.argv[1:])\n")
    done = python("-m", "lossscale_compat", "run", "-m", "trainer", "a", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "__main__ ['a']"


def test_a_traceback_starts_in_the_users_code(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("def f():\n    raise RuntimeError('boom')\n\nf()\n")
    done = lossscale_compat_run(str(script))
    assert done.returncode == 1
    frames = [line for line in done.stderr.splitlines() if line.strip().startswith("File ")]
    assert frames and all(str(script) in frame for frame in frames), done.stderr
    assert done.stderr.strip().endswith("RuntimeError: boom")


def test_the_environment_variable_turns_legacy_mode_on_in_any_python_process(tmp_path):
    code = "import tensorflow as tf; print(tf.mixed_precision.experimental.DynamicLossScale.__module__)"
    done = python("-c", code, env=dict(ENV, LOSSSCALE_COMPAT_LEGACY="1"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "lossscale_compat._loss_scale"


def test_without_the_variable_nothing_of_ours_is_imported():
    done = python("-c", "import sys; print(sorted(m for m in sys.modules if m.startswith('lossscale_compat')))")
    assert done.stdout.strip() == "[]"


def test_run_passes_legacy_mode_to_child_processes(tmp_path):
    script = tmp_path / "launcher.py"
    script.write_text(
        "import subprocess, sys\n"
        "code = 'import tensorflow as tf; print(tf.keras.mixed_precision.experimental.LossScaleOptimizer.__module__)'\n"
        "print(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True).stdout.strip())\n")
    done = lossscale_compat_run(str(script))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "lossscale_compat._optimizer"


def test_each_legacy_name_warns_once_per_process_with_the_users_values(tmp_path):
    script = tmp_path / "warns.py"
    script.write_text(
        "import tensorflow as tf\n"
        "mp = tf.mixed_precision.experimental\n"
        "for _ in range(3):\n"
        "    mp.DynamicLossScale(initial_loss_scale=1024, increment_period=7)\n"
        "mp.DynamicLossScale(initial_loss_scale=8)\n"
        "tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=64)\n")
    done = lossscale_compat_run(str(script))
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "LossScaleDeprecationWarning" in line]
    assert len(warnings) == 2, done.stderr
    assert "initial_scale=1024.0, dynamic_growth_steps=7" in warnings[0]
    assert "Policy('mixed_float16')" in warnings[1] and "FixedLossScale(64.0)" in warnings[1]
    assert all("lossscale-compat migrate" in line for line in warnings)


@pytest.mark.parametrize("how", ["not silenced", "-W", "filter"])
def test_warnings_can_be_silenced(tmp_path, how):
    """`-W ignore::DeprecationWarning` or a warnings filter silences the warning the same script gives otherwise."""
    script = tmp_path / "quiet.py"
    silence = "import warnings, lossscale_compat\n" \
              "warnings.filterwarnings('ignore', category=lossscale_compat.LossScaleDeprecationWarning)\n"
    script.write_text((silence if how == "filter" else "") +
                      "import tensorflow as tf\ntf.mixed_precision.experimental.FixedLossScale(8)\n")
    args = ["-W", "ignore::DeprecationWarning"] if how == "-W" else []
    done = python(*args, "-m", "lossscale_compat", "run", str(script))
    assert done.returncode == 0, done.stderr
    assert ("LossScaleDeprecationWarning" in done.stderr) is (how == "not silenced"), done.stderr


def _console_script():
    path = os.path.join(os.path.dirname(sys.executable), "lossscale-compat")
    if not os.path.exists(path):
        pytest.skip("the lossscale-compat console script is not installed beside this interpreter")
    return path


def test_the_console_script_runs_a_module_of_the_current_directory(tmp_path):
    (tmp_path / "mymod.py").write_text("import sys\nprint(__name__, sys.argv[1:])\n")
    done = subprocess.run(
        [_console_script(), "run", "-m", "mymod", "b"], env=ENV, cwd=tmp_path, capture_output=True, text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "__main__ ['b']"


@pytest.mark.parametrize("how", ["python -m", "console script"])
def test_a_module_that_does_not_exist_is_one_line(tmp_path, how):
    command = [sys.executable, "-m", "lossscale_compat"] if how == "python -m" else [_console_script()]
    done = subprocess.run(
        [*command, "run", "-m", "no_such_mod"], env=ENV, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1  # as `python -m no_such_mod`
    assert done.stderr.strip().splitlines() == ["lossscale-compat run: No module named no_such_mod"], done.stderr


def test_an_import_error_in_the_users_module_keeps_its_traceback(tmp_path):
    (tmp_path / "needs.py").write_text("import no_such_dependency\n")
    done = python("-m", "lossscale_compat", "run", "-m", "needs", cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and str(tmp_path / "needs.py") in done.stderr
    assert done.stderr.strip().endswith("ModuleNotFoundError: No module named 'no_such_dependency'")
