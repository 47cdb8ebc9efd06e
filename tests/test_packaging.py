"""The built wheel: the codemod installs under our own name, never as a top-level `codemods` package."""

import os
import subprocess
import sys
import zipfile

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
