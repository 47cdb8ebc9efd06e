"""The conformance suite runs in legacy mode, and records which TF 2.4 test each test mirrors and how it ran.

Set LOSSSCALE_COMPAT_CONFORMANCE_OUT to a path to write this stack's record there (JSON); make_table.py
turns the records of every stack into docs/tf24_conformance.md.
"""

import json
import os
import pathlib
import re
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
for _folder in ("optimizer", "loss_scale"):  # the tf24_item modules re-run here in legacy mode
    sys.path.insert(0, str(HERE.parent / _folder))
sys.path.insert(0, str(HERE))

import tf24_catalogue  # noqa: E402

_RESULTS: dict = {}


def item_mirrors(item):
    """What `item` mirrors: its `tf24_mirror(file, test)` marks, else its docstring's Mirrors line."""
    marks = [(m.args[0], m.args[1]) for m in item.iter_markers("tf24_mirror")]
    return marks or tf24_catalogue.mirrored_tests(getattr(item.function, "__doc__", None))


def pytest_configure(config):
    config.addinivalue_line("markers", "tf24_mirror(file, test): the TF 2.4 test this test mirrors")
    if os.environ.get("LOSSSCALE_COMPAT_CONFORMANCE_OUT") and (config.getoption("numprocesses", None) or 0) > 0:
        raise pytest.UsageError(
            "LOSSSCALE_COMPAT_CONFORMANCE_OUT records one process's results, and with pytest-xdist each worker "
            "would overwrite the record with its share. Run the conformance suite with `-n 0` to record it.")


@pytest.fixture(autouse=True)
def legacy_mode():
    """Every conformance test runs as a TF 2.4 program does: in legacy mode."""
    import lossscale_compat

    lossscale_compat.install()
    yield
    lossscale_compat.uninstall()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        for key in item_mirrors(item):
            reason = ""
            if report.skipped and isinstance(report.longrepr, tuple):
                reason = re.sub(r" at 0x[0-9a-f]+", "", str(report.longrepr[2]).replace("Skipped: ", ""))
            outcome_name = "xfailed" if hasattr(report, "wasxfail") else report.outcome
            _RESULTS.setdefault("::".join(key), []).append(
                {"test": item.nodeid.split("::", 1)[1], "outcome": outcome_name, "reason": reason})


def pytest_sessionfinish(session):
    out = os.environ.get("LOSSSCALE_COMPAT_CONFORMANCE_OUT")
    if out and _RESULTS:
        import tensorflow as tf

        from lossscale_compat import _flavour

        keras = "Keras 3" if _flavour.has_keras3_loss_scaling() else (
            "tf_keras" if type(tf.keras.optimizers.SGD).__module__.startswith("tf_keras") or
            "tf_keras" in tf.keras.optimizers.SGD.__module__ else "Keras 2")
        record = {"stack": f"TF {'.'.join(tf.__version__.split('.')[:2])} + {keras}",
                  "results": {key: sorted(runs, key=lambda r: r["test"]) for key, runs in sorted(_RESULTS.items())}}
        pathlib.Path(out).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
