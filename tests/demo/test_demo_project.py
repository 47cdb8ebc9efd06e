"""The bundled TF 2.4-era project trains as on TF 2.4.0, unmodified under `run` and migrated."""

import copy
import json
import sys
from pathlib import Path

import pytest

from lossscale_compat import _flavour

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import demo  # noqa: E402

GOLDEN = json.loads(Path(demo.GOLDEN).read_text())
TARGET = "keras3" if _flavour.has_keras3_loss_scaling() else "tf_keras"


def test_unmodified_under_run_matches_tf24(tmp_path):
    assert demo.differences(GOLDEN, demo.run_unmodified(str(tmp_path))) == []


def test_migrated_matches_tf24(tmp_path):
    migrated = demo.run_migrated(str(tmp_path), TARGET)
    without_skips = demo.KERAS3_PARTS_WITHOUT_SKIPS if TARGET == "keras3" else ()
    assert demo.differences(GOLDEN, migrated, without_skips) == []


@pytest.mark.parametrize("change", ["a skip lost", "a different scale", "iterations", "final loss"])
def test_the_comparison_names_what_differs(change):
    other = copy.deepcopy(GOLDEN)
    part = other["custom_loop"]
    if change == "a skip lost":
        part["skipped"] = part["skipped"][1:]
    elif change == "a different scale":
        part["loss_scale"][-1] *= 2
    elif change == "iterations":
        part["iterations"] -= 1
    else:
        part["final_loss"] *= 1.5
    found = demo.differences(GOLDEN, other)
    assert len(found) == 1 and found[0].startswith("custom_loop: ")


def test_the_demo_as_run_by_nox_prints_named_columns_writes_the_plot_and_prints_its_path(tmp_path):
    """`nox -s example` runs `python examples/demo.py` with matplotlib installed, as this does."""
    import subprocess

    plot = tmp_path / "plot.png"
    done = subprocess.run(
        [sys.executable, demo.__file__, "--target", TARGET, "--plot", str(plot)],
        env=demo.ENV, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("step "))
    assert header.split()[1:] == " ".join([demo.RECORDED, demo.UNMODIFIED, demo.MIGRATED]).split()
    assert f"{demo.RECORDED}: " in done.stdout and "recorded on TensorFlow 2.4.0" in done.stdout
    assert f"plot of the loss-scale trajectories: {plot}\n" in done.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000
