"""Runs Python programs as `python ARGS...` would, each in a fork of one interpreter that has TensorFlow imported.

Starting TensorFlow and Keras is most of a small example program's run time (about 6 s of 8 on the CI machine), and
the suite runs dozens of them on every stack. A `WarmPython` starts one server process per environment that imports
TensorFlow, Keras and lossscale_compat once and then forks a child per program: the child starts from that state, so
no program sees another's, and the server itself never runs a TensorFlow op (forking is safe only before TensorFlow's
runtime starts; the server checks that it has not). Where the server cannot import them (a stack without the Keras
that an environment asks for), programs run as plain subprocesses, as `python` would run them.

The protocol is one JSON line each way: first {"error"} (null once warm), then {"argv", "cwd", "out", "err"} ->
{"returncode"} per program.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Done:
    """What a finished program left: its exit code and its output."""

    returncode: int
    stdout: str
    stderr: str


class WarmPython:
    """One warm server for one environment; `run` is `subprocess.run([sys.executable, *argv], ...)` without start-up."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = dict(env)
        self._outputs = Path(tempfile.mkdtemp(prefix="warm_python."))  # this server's children's stdout and stderr
        self._server: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, __file__], env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        ready = json.loads(self._server.stdout.readline() or '{"error": "the server exited at start"}')
        self.preload_error: str | None = ready.get("error")
        """Why TensorFlow, its Keras or lossscale_compat could not be imported in this environment (None: they were)."""
        if self.preload_error is not None:  # nothing to keep warm: run each program as its own process
            self.close()

    def run(self, argv: list[str], cwd: Path, timeout: float = 600) -> Done:
        """Runs `python *argv` in `cwd`; returns its exit code, stdout and stderr."""
        if self._server is None:
            done = subprocess.run([sys.executable, *argv], cwd=cwd, env=self.env, capture_output=True, text=True,
                                  timeout=timeout, check=False)
            return Done(done.returncode, done.stdout, done.stderr)
        out, err = self._outputs / "stdout", self._outputs / "stderr"
        self._server.stdin.write(json.dumps({"argv": argv, "cwd": str(cwd), "out": str(out), "err": str(err)}) + "\n")
        self._server.stdin.flush()
        reply = _read_line(self._server, timeout)
        try:
            return Done(json.loads(reply)["returncode"], out.read_text(), err.read_text())
        finally:
            out.unlink(missing_ok=True)
            err.unlink(missing_ok=True)

    def close(self) -> None:
        """Stops the server (and any child still running)."""
        if self._server is not None:
            server, self._server = self._server, None
            server.stdin.close()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, 9)
                server.wait()
            server.stdout.close()
            shutil.rmtree(self._outputs, ignore_errors=True)


def _read_line(server: subprocess.Popen, timeout: float) -> str:
    """The server's next line, or TimeoutError (after killing the server and its child) when none comes in time."""
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(server.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            os.killpg(server.pid, 9)
            raise TimeoutError(f"the program did not finish within {timeout} s")
    line = server.stdout.readline()
    if not line:
        raise RuntimeError("the warm Python server died; run the program with plain `python` to see why")
    return line


_SERVERS: dict[tuple, WarmPython] = {}


def warm_python(env: dict[str, str]) -> WarmPython:
    """This process's warm server for `env`, started at first use and stopped at exit."""
    env = {name: value for name, value in env.items() if name != "PYTEST_CURRENT_TEST"}  # differs per test
    key = tuple(sorted(env.items()))
    if key not in _SERVERS:
        _SERVERS[key] = WarmPython(env)
    return _SERVERS[key]


@atexit.register
def _close_all() -> None:
    for server in _SERVERS.values():
        server.close()


# ---------------------------------------------------------------------------------------------- the server side


def _preload() -> str | None:
    """Imports what every program imports; returns why that failed or started TensorFlow's runtime, else None."""
    try:
        import tensorflow as tf

        tf.keras.optimizers  # noqa: B018 -- the lazy import of Keras (Keras 3, tf_keras or the built-in Keras 2)
        from tensorflow.python.eager import context

        import lossscale_compat.legacy  # noqa: F401 -- lossscale_compat and its legacy mode
    except Exception as error:  # noqa: BLE001 -- any failure: programs then run as plain processes, failing as they would
        return f"{type(error).__name__}: {error}"
    if context.context()._initialized:  # a started runtime would not survive the fork
        return "importing TensorFlow started its runtime"
    return None


def _child(request: dict) -> int:
    """Runs the request as `python ARGV` would, in this (forked) process; returns the exit code."""
    import runpy
    import traceback

    os.chdir(request["cwd"])
    for fd, path in ((1, request["out"]), (2, request["err"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    argv = request["argv"]
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            sys.path[0] = os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path[0] = ""
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
        return 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 -- as the interpreter does: the traceback on stderr, exit code 1
        traceback.print_exc()
        return 1
    finally:
        atexit._run_exitfuncs()  # what the interpreter runs at exit; os._exit below does not
        sys.stdout.flush()
        sys.stderr.flush()


def _serve() -> None:
    error = _preload()
    print(json.dumps({"error": error}), flush=True)
    if error is not None:
        return
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            os._exit(_child(request))
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    _serve()
