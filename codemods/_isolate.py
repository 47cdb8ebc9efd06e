"""Runs each file's migration in a worker process, so that a crash, a hang or a memory blow-up ends that file alone.

libcst's native parser can die of a stack overflow (SIGSEGV) on a deep enough expression, and some inputs take
minutes and gigabytes. Each task goes to a worker over a pipe; a worker that dies, passes its time bound or is
killed for memory is replaced, and its file gets an error naming the cause. `-j 1` uses one such worker too.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

R = TypeVar("R")


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-file bounds: seconds of wall time and bytes of address space (0: no bound)."""

    timeout: float = 0.0
    memory: int = 0


def _end_quietly(signum: int, frame: object) -> None:
    os._exit(128 + signum)


def _die_with_parent(parent: int) -> None:
    """Makes a worker end when the run that started it ends, even by SIGKILL, and quietly on Ctrl-C."""
    import threading

    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # a run started by a script's `cmd &` ignores Ctrl-C
        signal.signal(signal.SIGINT, _end_quietly)  # Ctrl-C reaches the whole process group; the run reports it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:  # where prctl is missing, and as a second guard
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _address_space() -> int:
    """This process's virtual size in bytes now (0 where /proc does not say)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def _bound_memory(limit: int) -> None:
    """Bounds the address space to what the worker has at its start plus `limit` bytes (0: no bound)."""
    if not limit:
        return
    limit += _address_space()  # a parent that mapped a lot (a test run that imported TF) must not starve the worker
    try:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError, OverflowError):  # no such limit here (Windows), not allowed, or more
        pass  # than the address space (--max-memory 10**30): no bound


def _serve(conn: Any, work: Callable[[str, bytes], Any], parent: int, memory: int) -> None:
    """A worker's loop: receives (index, path, bytes), sends back (index, result), until it receives None."""
    import faulthandler

    _die_with_parent(parent)
    faulthandler.disable()  # a crash is reported by the run, with the file's name; no dump of this process
    _bound_memory(memory)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        if task is None:
            os._exit(0)
        index, path, data = task
        conn.send((index, work(path, data)))


class _Worker:
    """One worker process, its end of the pipe, and the task it holds (if any) with its deadline."""

    def __init__(self, context: Any, work: Callable[[str, bytes], Any], limits: Limits) -> None:
        ours, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs, work, os.getpid(), limits.memory), daemon=True)
        self.process.start()
        theirs.close()
        self.conn = ours
        self.task: int | None = None
        self.deadline = float("inf")

    def give(self, index: int, path: str, data: bytes, timeout: float) -> None:
        self.task = index
        self.deadline = time.monotonic() + timeout if timeout else float("inf")
        self.conn.send((index, path, data))

    def kill(self) -> None:
        try:
            self.process.kill()
        except (OSError, AttributeError):
            pass
        self.process.join(5)
        self.conn.close()


def crash_cause(exitcode: int | None, limits: Limits) -> str:
    """Says how a worker that sent no result ended."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        cause = f"the parser crashed on this file ({name})"
    else:
        cause = f"the worker migrating this file ended (exit code {exitcode})"
    if limits.memory:
        cause += f", or it ran out of the {limits.memory >> 20} MB that --max-memory allows"
    return cause


class Pool(Generic[R]):
    """Runs `work(path, data)` for each task in `jobs` workers; a task whose worker fails gets `failed(...)`."""

    def __init__(
        self,
        work: Callable[[str, bytes], R],
        failed: Callable[[str, bytes, str], R],
        jobs: int,
        limits: Limits,
    ) -> None:
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self._work, self._failed, self._jobs, self._limits = work, failed, max(jobs, 1), limits

    def run(self, tasks: Sequence[tuple[str, bytes]]) -> list[R]:
        """Returns the results in the order of `tasks`."""
        results: dict[int, R] = {}
        workers: list[_Worker] = []
        pending = list(range(len(tasks)))[::-1]
        try:
            while pending or any(w.task is not None for w in workers):
                while pending and len(workers) < min(self._jobs, len(tasks)):
                    workers.append(_Worker(self._context, self._work, self._limits))
                for worker in list(workers):
                    if worker.task is None and pending:
                        index = pending.pop()
                        try:
                            worker.give(index, *tasks[index], self._limits.timeout)
                        except OSError:  # the worker died while idle (killed from outside)
                            worker.kill()
                            workers.remove(worker)
                            results[index] = self._failed(
                                *tasks[index], crash_cause(worker.process.exitcode, self._limits)
                            )
                if any(w.task is not None for w in workers):
                    self._wait(workers, tasks, results)
        finally:
            for worker in workers:
                worker.kill()
        return [results[i] for i in range(len(tasks))]

    def _wait(self, workers: list[_Worker], tasks: Sequence[tuple[str, bytes]], results: dict[int, R]) -> None:
        """Waits for one worker to answer, die or pass its deadline; replaces the ones that failed."""
        from multiprocessing.connection import wait

        busy = [w for w in workers if w.task is not None]
        deadline = min(w.deadline for w in busy)
        timeout = None if deadline == float("inf") else max(deadline - time.monotonic(), 0.0)
        ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout)
        now = time.monotonic()
        for worker in busy:
            index = worker.task
            assert index is not None
            reason = None
            if worker.conn in ready or worker.process.sentinel in ready:
                try:
                    if worker.conn.poll():
                        got, result = worker.conn.recv()
                        results[got] = result
                        worker.task, worker.deadline = None, float("inf")
                        continue
                except (EOFError, OSError):
                    pass
                worker.process.join(5)
                reason = crash_cause(worker.process.exitcode, self._limits)
            elif now >= worker.deadline:
                reason = f"it took longer than --timeout ({self._limits.timeout:g} s) allows, so it was stopped"
            if reason is not None:
                worker.kill()
                workers.remove(worker)
                results[index] = self._failed(*tasks[index], reason)
