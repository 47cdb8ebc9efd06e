"""Test matrix: the whole suite once per supported TensorFlow/Keras stack, each in its own venv."""

import glob
import os

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.error_on_missing_interpreters = True

# stack name -> (pip requirements, environment)
STACKS = {
    "tf221-keras3": (["tensorflow-cpu==2.21.*"], {}),
    "tf221-tfkeras": (["tensorflow-cpu==2.21.*", "tf-keras==2.21.*"], {"TF_USE_LEGACY_KERAS": "1"}),
    "tf215-keras2": (["tensorflow-cpu==2.15.*"], {}),
}

ENV = {"TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}


def install_stack(session: nox.Session, stack: str, extras: str = "") -> dict:
    """Installs one stack and the package into the session; returns the environment to run it with."""
    requirements, env = STACKS[stack]
    session.install(*requirements)
    session.install("-e", f".{extras}")
    return {**ENV, **env}


@nox.session(python="3.11")
@nox.parametrize("stack", list(STACKS))
def tests(session: nox.Session, stack: str) -> None:
    """Runs the whole test suite on one stack."""
    session.run("pytest", *session.posargs, env=install_stack(session, stack, "[test]"))


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """Runs ruff (lint and format check) and mypy over the package, the codemod, bench/ and this file; no TensorFlow."""
    session.install("ruff==0.17.6", "mypy==2.4.1", "libcst>=1.1", "packaging", "pytest")
    session.run("ruff", "check", *session.posargs)
    session.run("ruff", "format", "--check", "--diff")
    session.run("mypy")


@nox.session(python="3.11")
def example(session: nox.Session) -> None:
    """Runs the bundled TF 2.4-era project unmodified and migrated on TF 2.21, side by side with TF 2.4.0."""
    session.run("python", "examples/demo.py", *session.posargs, env=install_stack(session, "tf221-keras3"))


@nox.session(python="3.11")
@nox.parametrize("stack", list(STACKS))
def bench(session: nox.Session, stack: str) -> None:
    """Prints our optimizer's step time over the native Keras one's, the behaviour check's time and legacy mode's
    start-up cost, on one stack."""
    env = install_stack(session, stack)
    session.run("python", "bench/optimizer_overhead.py", env=env)
    session.run("python", "bench/behaviour_equivalence.py", env=env)
    session.run("python", "bench/legacy_startup.py", env=env)


def python_38() -> str:
    """Python 3.8 for TF 2.4.0: pyenv's if it has one (its shim only works when 3.8 is active), else PATH's."""
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")))
    return pyenv[-1] if pyenv else "3.8"


@nox.session(python=python_38(), name="record-goldens", venv_backend="venv")
def record_goldens(session: nox.Session) -> None:
    """Re-records tests/goldens and examples/goldens from real TF 2.4.0 (CPU), and TF 2.3.0's names."""
    session.install("pip<24")
    session.install("tensorflow-cpu==2.4.0", "protobuf==3.20.3")
    session.run("python", "tests/recorders/record_tf24.py", env=ENV)
    session.run("python", "tests/recorders/record_tf24_optimizer.py", env=ENV)
    session.run("python", "tests/recorders/record_tf24_equivalence.py", env=ENV)
    session.run("python", "tests/recorders/record_tf24_untraced_loop.py", env=ENV)
    session.run("python", "tests/recorders/record_tf24_conformance.py", env=ENV)
    session.run("python", "examples/tf24_custom_loop.py", "--record", env=ENV)
    session.run("python", "examples/tf24/record_goldens.py", env=ENV)
    session.run("python", "examples/demo.py", "--record", env=ENV)
    session.run("python", "tests/recorders/record_tf24_names.py", env=ENV)
    # TF <= 2.3's private modules, which legacy mode serves too, are TF 2.3.0's: its section of the names golden last.
    session.install("tensorflow-cpu==2.3.0", "protobuf==3.20.3")
    session.run("python", "tests/recorders/record_tf24_names.py", env=ENV)
