"""Test matrix: the whole suite once per supported TensorFlow/Keras stack, each in its own venv."""

import glob
import importlib.util
import json
import os
import re
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import nox

nox.options.error_on_missing_interpreters = True


def _load_stacks():
    """The package's own table of supported stacks, loaded from its file: it needs nothing installed."""
    spec = importlib.util.spec_from_file_location("_stacks", Path(__file__).parent / "lossscale_compat" / "_stacks.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


stacks = _load_stacks()
nox.options.sessions = [
    "lint",
    *(f"tests(stack='{name}')" for name in stacks.STACKS_BY_NAME if name not in stacks.NOT_YET_IN_CI),
    "codemod-libcst",
    "example",  # the README's first command, on CI's clean clone: it must train as TF 2.4.0 did and write the plot
    "record-tf24",  # `record` and `compare` on TF 2.4.0 itself (Python 3.8): about 6 minutes, the install included
]
ENV = {"TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
# Each stack's results, for the support table (`nox -s support-table`).
RESULTS = Path("build/matrix")
# uv links every venv's files from one cache, so 19 TensorFlow venvs cost one download and seconds each.
VENV_BACKEND = "uv|virtualenv"


def install_stack(session: nox.Session, name: str, extras: str = "") -> dict:
    """Installs one stack and the package into the session; returns the environment to run it with."""
    stack = stacks.STACKS_BY_NAME[name]
    session.install("pip", *stack.requirements)  # pip too: uv's venvs have none, and the packaging tests use it
    session.install("-e", f".{extras}")
    return {**ENV, **stack.environment}


@nox.session(python="3.11", venv_backend=VENV_BACKEND)
@nox.parametrize("stack", list(stacks.STACKS_BY_NAME))
def tests(session: nox.Session, stack: str) -> None:
    """Runs the whole suite on the three main stacks, and the core tests (lossscale_compat/_stacks.py) on the rest."""
    env = install_stack(session, stack, "[test]")
    # Two pytest workers: CI has two cores, and most of a test's time is single-threaded Python.
    selected = ["-n", "2", *stacks.STACKS_BY_NAME[stack].tests]
    if any(Path(arg.split("::")[0]).exists() for arg in session.posargs):  # tests named on the command line
        selected = []
    RESULTS.mkdir(parents=True, exist_ok=True)
    junit = RESULTS / f"{stack}.xml"
    junit.unlink(missing_ok=True)
    ran = stacks.STACKS_BY_NAME[stack].ran
    try:
        session.run("pytest", *selected, *session.posargs, f"--junitxml={junit}", env=env)
    finally:
        if junit.exists():
            _record(session, stack, junit, ran, env)


def _record(session: nox.Session, stack: str, junit: Path, ran: str, env: dict) -> None:
    """Writes build/matrix/STACK.json: what ran, the versions installed and pytest's counts."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        outcome = case.find("*")
        if outcome is None:
            counts["passed"] += 1
        elif outcome.tag in ("failure", "error"):
            counts["failed"] += 1
        else:  # junit writes an expected failure as a skip of type pytest.xfail
            counts["xfailed" if outcome.get("type") == "pytest.xfail" else "skipped"] += 1
    versions = session.run(
        "python",
        "-c",
        "import importlib.metadata as m, json; "
        "names = ('tensorflow-cpu', 'tensorflow', 'keras', 'keras-nightly', 'tf-keras'); "
        "print(json.dumps({n: v for n in names if (v := next((d.version for d in m.distributions() "
        "if d.metadata['Name'].lower().replace('_', '-') == n), None))}))",
        silent=True,
        env=env,
    )
    commit = session.run("git", "rev-parse", "--short", "HEAD", external=True, silent=True, success_codes=[0, 128])
    record = {
        "stack": stack,
        "commit": commit.strip() if commit and "fatal" not in commit else "",
        "ran": ran if not session.posargs else f"{ran}, pytest {' '.join(session.posargs)}",
        "versions": json.loads(versions.strip().splitlines()[-1]),
        **counts,
    }
    (RESULTS / f"{stack}.json").write_text(json.dumps(record, indent=1) + "\n")


@nox.session(name="support-table", python=False)
def support_table(session: nox.Session) -> None:
    """Writes the support table in docs/support.md from the last run of each stack (the README links to it).

    Adds each stack's last run (build/matrix) to docs/support.json first, and writes the table from that file.
    """
    recorded = Path("docs/support.json")
    results = json.loads(recorded.read_text()) if recorded.exists() else {}
    results.update({path.stem: json.loads(path.read_text()) for path in RESULTS.glob("*.json")})
    recorded.write_text(json.dumps(dict(sorted(results.items())), indent=1) + "\n")
    table = stacks.support_table(results)
    path = Path("docs/support.md")
    path.write_text(stacks.with_support_table(path.read_text(), table))
    session.log(f"wrote the support table into {path}")


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """Runs ruff (lint and format check) and mypy over the package, the codemod, bench/ and this file; no TensorFlow."""
    session.install("ruff==0.17.6", "mypy==2.4.1", "libcst>=1.1,<1.10", "packaging", "pytest")
    session.run("ruff", "check", *session.posargs)
    # tests/ is not linted as a whole (recorders and data), but holds to the same complexity ceiling.
    session.run("ruff", "check", "--select", "C901", "--config", "include = ['tests/**/*.py']", "tests")
    session.run("ruff", "format", "--check", "--diff")
    session.run("mypy")


def libcst_oldest() -> str:
    """The oldest libcst that pyproject.toml allows (its `libcst>=X` lower bound)."""
    with open("pyproject.toml", encoding="utf-8") as handle:
        found = re.search(r'^dependencies = \[.*"libcst>=([\w.]+)', handle.read(), re.MULTILINE)
    assert found is not None, "pyproject.toml's dependencies name libcst>=X"
    return found.group(1)


@nox.session(python="3.11", name="codemod-libcst", venv_backend=VENV_BACKEND)
@nox.parametrize("libcst", ["oldest", "newest"])
def codemod_libcst(session: nox.Session, libcst: str) -> None:
    """Runs the codemod tests without TensorFlow on the oldest libcst allowed, or on the newest release.

    The oldest is pyproject.toml's lower bound; the newest may be past pyproject's cap: when it passes there, raise the
    cap.
    """
    session.install("-e", ".[test]")
    warnings = []
    if libcst == "oldest":
        session.install(f"libcst=={libcst_oldest()}")
        # libcst before 1.2 declares a TypedDict through mypy_extensions, which warns when libcst is imported.
        warnings = ["-W", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"]
    else:
        session.install("--upgrade", "libcst")
    session.run("python", "-c", "import importlib.metadata as m; print('libcst', m.version('libcst'))")
    session.run("pytest", *warnings, "tests/migrate", "tests/test_layers.py", *session.posargs, env=ENV)


# The demo's plot, shown in the README and rewritten by `nox -s plot`.
PLOT = "docs/img/demo_loss_scale.png"


@nox.session(python="3.11", venv_backend=VENV_BACKEND)
def example(session: nox.Session) -> None:
    """Runs the bundled TF 2.4-era project unmodified and migrated on TF 2.21 beside TF 2.4.0, and plots the three."""
    env = install_stack(session, "tf221-keras3")
    session.install("matplotlib")
    picture = Path("demo_loss_scale.png")  # the demo's default --plot
    picture.unlink(missing_ok=True)
    session.run("python", "examples/demo.py", *session.posargs, env=env)
    if not session.posargs and not picture.exists():
        session.error(f"examples/demo.py wrote no plot at {picture.resolve()}")


@nox.session(python="3.11", venv_backend=VENV_BACKEND)
def plot(session: nox.Session) -> None:
    """Rewrites the README's picture (docs/img/demo_loss_scale.png) by running the demo."""
    env = install_stack(session, "tf221-keras3")
    session.install("matplotlib")
    Path(PLOT).parent.mkdir(parents=True, exist_ok=True)
    session.run("python", "examples/demo.py", "--plot", PLOT, *session.posargs, env=env)


@nox.session(python="3.11", venv_backend=VENV_BACKEND)
@nox.parametrize("stack", list(stacks.FULL_SUITE))
def bench(session: nox.Session, stack: str) -> None:
    """Prints the step-time overhead, the behaviour check's time and legacy mode's start-up cost on one stack.

    The overhead is our optimizer's step time over the native Keras one's.
    """
    env = install_stack(session, stack)
    session.run("python", "bench/optimizer_overhead.py", env=env)
    session.run("python", "bench/behaviour_equivalence.py", env=env)
    session.run("python", "bench/legacy_startup.py", env=env)
    session.run("python", "bench/equivalent_limits.py", env=env)
    session.run("python", "bench/record_overhead.py", env=env)


@nox.session(name="bench-xla", python="3.11", venv_backend=VENV_BACKEND)
@nox.parametrize("stack", [stack.name for stack in stacks.STACKS if not stack.keras_2 and not stack.gpu_build])
def bench_xla(session: nox.Session, stack: str) -> None:
    """Prints each form of ours against Keras 3's own class under XLA on one Keras 3 stack (`-- --repeats N`)."""
    env = install_stack(session, stack)
    session.run("python", "bench/optimizer_overhead.py", "--xla", *session.posargs, env=env)


def python_38() -> str:
    """Python 3.8 for TF 2.4.0: pyenv's if it has one (its shim only works when 3.8 is active), else PATH's."""
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")))
    return pyenv[-1] if pyenv else "3.8"


# Every TF 2.4.0 recorder in tests/recorders, in the order record-goldens runs them (tests/test_docs.py checks that
# none is missing); the names recorder runs after the example programs' own, then it and the loss-scale weights
# recorder again on TF 2.3.0.
TF24_RECORDERS = (
    "tests/recorders/record_tf24.py",
    "tests/recorders/record_tf24_optimizer.py",
    "tests/recorders/record_tf24_optimizer_v2.py",
    "tests/recorders/record_tf24_equivalence.py",
    "tests/recorders/record_tf24_untraced_loop.py",
    "tests/recorders/record_tf24_cross_restore.py",
    "tests/recorders/record_tf24_stepped_restore.py",
    "tests/recorders/record_tf24_raw_apply.py",
    "tests/recorders/record_tf24_bad_scales.py",
    "tests/recorders/record_tf24_lambda_h5.py",
    "tests/recorders/record_tf24_conformance.py",
    "tests/recorders/record_tf24_gpu_audit.py",
    "tests/recorders/record_tf24_forwarding.py",
    "tests/recorders/record_tf24_serialization.py",
    "tests/recorders/record_tf24_graph.py",
    "tests/recorders/record_tf24_graph_compile.py",
    "tests/recorders/record_tf24_notebook.py",
    "tests/recorders/record_tf24_layer_attributes.py",
    "tests/recorders/record_tf24_loss_scale_weights.py",
    "tests/recorders/record_tf24_project_traces.py",
)


@nox.session(python=python_38(), name="record-tf24", venv_backend="venv")
def record_tf24(session: nox.Session) -> None:
    """`lossscale-compat record` and `compare` on the old stack: Python 3.8, TensorFlow 2.4.0 (CPU).

    The package is installed as users get it, from a wheel (built here with nox's own Python: setuptools 77, which
    the build needs, no longer runs on 3.8).
    """
    session.install("pip<24")
    session.install("tensorflow-cpu==2.4.0", "protobuf==3.20.3", "pytest>=7", "matplotlib")
    wheels = Path(session.create_tmp()) / "wheels"
    session.run("uv", "build", "--wheel", "--out-dir", str(wheels), "--python", sys.executable, external=True)
    session.install("--force-reinstall", "--no-deps", *map(str, sorted(wheels.glob("*.whl"))[-1:]))
    session.install("packaging", "libcst>=1.1")
    # TF 2.4.0's compiled modules warn on import (ImportWarning), which the suite's `error` filter would raise.
    tests = ["tests/trace/test_record.py", "tests/trace/test_skips.py", "tests/trace/test_compare.py"]
    tests.append("tests/trace/test_testing_api.py")
    session.run("python", "-m", "pytest", *tests, "-q", "-W", "ignore::ImportWarning", *session.posargs, env=ENV)


@nox.session(python=python_38(), name="record-goldens", venv_backend="venv")
def record_goldens(session: nox.Session) -> None:
    """Re-records tests/goldens and examples/goldens from real TF 2.4.0 (CPU), and TF 2.3.0's names and weights."""
    session.install("pip<24")
    session.install("tensorflow-cpu==2.4.0", "protobuf==3.20.3")
    for recorder in TF24_RECORDERS:
        session.run("python", recorder, env=ENV)
    session.run("python", "examples/tf24_custom_loop.py", "--record", env=ENV)
    session.run("python", "examples/tf24/record_goldens.py", env=ENV)
    session.run("python", "examples/demo.py", "--record", env=ENV)
    session.run("python", "tests/recorders/record_tf24_names.py", env=ENV)
    # TF <= 2.3's private modules, which legacy mode serves too, are TF 2.3.0's: its section of the names golden last.
    session.install("tensorflow-cpu==2.3.0", "protobuf==3.20.3")
    session.run("python", "tests/recorders/record_tf24_names.py", env=ENV)
    session.run("python", "tests/recorders/record_tf24_loss_scale_weights.py", env=ENV)
