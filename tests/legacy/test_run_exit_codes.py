"""`lossscale-compat run` exits, and prints, as `python` itself does for the same failure (issue 47).

Each case runs the same program both ways, in child processes, and compares with real `python`'s output; the
exit codes must also be the ones docs/legacy_mode.md's table gives.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
ENV.pop("LOSSSCALE_COMPAT_LEGACY", None)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "legacy_mode.md"

# (the docs table's row, the script, whether stderr must be the same as python's, byte for byte)
CASES = {
    "the program ended normally": ("print('done')\n", True),
    "`sys.exit(N)`": ("import sys\nsys.exit(3)\n", True),
    '`sys.exit("message")`': ("import sys\nsys.exit('stopped: no data')\n", True),
    "an uncaught exception": ("def f():\n    raise KeyError('missing')\n\nf()\n", True),
    "the script has a syntax error": ("x = 1\nprint(x\n", True),
    "no such script": (None, False),
}


def _both(tmp_path, source):
    script = tmp_path / "train.py"
    if source is not None:
        script.write_text(source)
    target = "train.py" if source is not None else "nope.py"
    plain = subprocess.run([sys.executable, target], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                           timeout=300)
    ours = subprocess.run([sys.executable, "-m", "lossscale_compat", "run", target], cwd=tmp_path, env=ENV,
                          capture_output=True, text=True, timeout=300)
    return plain, ours


def _documented_codes(row: str) -> tuple[str, str]:
    """The first number of each exit-code column of the docs table's row `row`."""
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| {row} |"):
            python_cell, run_cell = line.split(" | ")[1:3]
            return re.match(r"\d+|N", python_cell).group(), re.match(r"\d+|N", run_cell).group()
    raise AssertionError(f"docs/legacy_mode.md's exit-code table has no row {row!r}")


@pytest.mark.parametrize("row", list(CASES))
def test_run_exits_and_prints_as_python_does(tmp_path, row):
    source, same_stderr = CASES[row]
    plain, ours = _both(tmp_path, source)
    assert ours.returncode == plain.returncode, (plain.stderr, ours.stderr)
    assert ours.stdout == plain.stdout
    if same_stderr:
        assert ours.stderr == plain.stderr  # no `<frozen runpy>` frame, the script's absolute path as python gives
    else:
        assert ours.stderr.count("\n") == 1  # one line naming the script
    documented = _documented_codes(row)
    expected = str(plain.returncode) if "N" not in documented else "N"
    assert documented == (expected, expected), row


def test_a_syntax_error_shows_no_frame_of_runpy(tmp_path):
    plain, ours = _both(tmp_path, CASES["the script has a syntax error"][0])
    assert "SyntaxError" in plain.stderr and "Traceback" not in plain.stderr  # what python shows
    assert "<frozen runpy>" not in ours.stderr and "Traceback" not in ours.stderr
    assert f'File "{tmp_path / "train.py"}", line 2' in ours.stderr


def test_a_module_that_does_not_exist_exits_as_python_m_does(tmp_path):
    plain = subprocess.run([sys.executable, "-m", "no_such_module_here"], cwd=tmp_path, env=ENV,
                           capture_output=True, text=True, timeout=300)
    ours = subprocess.run([sys.executable, "-m", "lossscale_compat", "run", "-m", "no_such_module_here"],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert ours.returncode == plain.returncode == int(_documented_codes("no such module (`-m`)")[1])
