"""The built wheel: the codemod installs under our own name, never as a top-level `codemods` package, and the wheel
installs and runs as the README says."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_wheel_installs_the_codemod_as_lossscale_compat_codemods(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), REPO],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "lossscale_compat/codemods/cli.py" in names
    assert "lossscale_compat/codemods/rules/optimizer.py" in names
    assert "lossscale_compat/codemods/target_names/tf221-keras3.json" in names  # the verifier's recorded names
    assert not [name for name in names if name.startswith("codemods/")]

    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    probe = ("import importlib.util, lossscale_compat.codemods.cli as cli; "
             "print(cli.__file__); print(importlib.util.find_spec('codemods'))")
    done = subprocess.run([sys.executable, "-S", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(target)), check=True)
    cli_file, top_level = done.stdout.split()
    assert cli_file.startswith(str(target)) and top_level == "None"


def _build_module() -> bool:
    """Whether the `build` package (the `test` extra's) is installed: not the repository's own build/ directory."""
    import importlib.util

    spec = importlib.util.find_spec("build")
    return spec is not None and spec.origin is not None


@pytest.mark.skipif(not _build_module(), reason="needs `build` (the test extra): python -m build")
def test_the_built_wheel_installs_beside_the_tensorflow_already_there_and_each_command_runs(tmp_path):
    """The README's install from a built wheel, as a user does it: `python -m build`, then `pip install` of the wheel
    into a fresh venv that sees this environment's TensorFlow (as --system-site-packages would), without an index."""
    import shutil
    import sysconfig

    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), REPO],
                   check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("lossscale_compat-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "beside_tensorflow.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
                                str(wheel)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr  # no index: every dependency was already there
    assert not list(Path(site).glob("tensorflow*")) and (Path(site) / "lossscale_compat_legacy.pth").exists()

    command = str(venv / "bin" / "lossscale-compat")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for args in (["--version"], ["--help"], ["migrate", "--help"], ["run", "--help"], ["equivalent", "--help"]):
        done = subprocess.run([command, *args], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert done.returncode == 0 and done.stdout.strip(), (args, done.stderr)
    where = subprocess.run([str(python), "-c", "import lossscale_compat, importlib.util as u; "
                            "print(lossscale_compat.__file__); print(u.find_spec('tensorflow').origin)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.split()
    assert where[0].startswith(site) and not where[1].startswith(str(venv))  # ours from the wheel, TF beside it
    shutil.copytree(Path(REPO) / "examples" / "project", tmp_path / "project")
    done = subprocess.run([command, "migrate", "project"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # changes pending
    assert "+++ b/project/train.py" in done.stdout and "2 file(s) would be migrated" in done.stderr
