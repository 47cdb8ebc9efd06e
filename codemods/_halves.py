"""Migrates a big file as two halves on two cores, when neither half can see the other.

The file is cut at a top-level line near its middle. This process migrates the first half while a forked
child migrates the second, parsed after a copy of the first half's one-line imports. The two results are
joined only when they are what a migration of the whole file gives:

- both halves parse, print back to their own bytes, and agree on encoding and newline;
- neither holds a custom-loop call or a loss-scale read (those rules weigh the whole module);
- a module-level name that the second half uses or asks about, and the first half binds, is bound there
  only by the copied imports; the first half uses or asks about no name the second half binds;
- the copied imports are left as they are, and the second half places no warning on them;
- no new name of one half could be spelled with an import (or module alias) of the other half only.

Neither half adds the imports its new names need: the first half's module gets those of both, once joined.

Otherwise `transform_in_halves` returns None and the caller migrates the whole file in one process.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import re
import signal
import sys
import threading
import time
from collections.abc import Callable

import libcst as cst
from libcst.codemod import CodemodContext

from . import _imports
from . import _warnings as w
from .migrate_loss_scale import MigrateLossScaleCommand, prints

MIN_BYTES = 256 * 1024
"""Smaller files are migrated in one process: forking and joining would cost more than they save."""

_SEARCHED_LINES = 2000  # lines looked at, from the middle on, for a place to cut
_NEWLINE = re.compile(rb"\r\n?|\n")
_STARTS_STATEMENT = re.compile(rb"[A-Za-z_]")
_CONTINUES_STATEMENT = re.compile(rb"(?:else|elif|except|finally)\b")
# Byte tests that a migration in halves would be refused (see `likely_refused`).
_WHOLE_MODULE_RULES = re.compile(rb"get_scaled_loss|get_unscaled_gradients|\.loss_scale\b")
_TOP_LEVEL_NAME = re.compile(
    rb"^(?:(?:async[ \t]+)?def|class)[ \t]+(\w+)|^(\w+)[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE
)
_READ_WORD = re.compile(rb"\b(\w+)\b(?![ \t]*=[^=])")  # a word, unless an assignment's target
_SPELLING_IMPORT = re.compile(rb"^(?:import|from)[ \t]+(?:tensorflow|keras|tf_keras|lossscale_compat)\b", re.MULTILINE)
# A top-level import on one line with nothing else on it: what the second half gets a copy of.
_COPIED_IMPORT = re.compile(rb"^(?:import|from)[ \t][^\r\n;#()\\]*\r?\n", re.MULTILINE)


def worth_it(data: bytes) -> bool:
    """Whether `data` is big enough to migrate in halves, and this process may fork safely."""
    return len(data) >= MIN_BYTES and hasattr(os, "fork") and threading.active_count() == 1


def likely_refused(head: bytes, tail: bytes) -> bool:
    """Whether the bytes show what most often refuses the join, so that a file is not migrated twice over.

    A custom loop or loss-scale read; a name defined or assigned at the top of one half and used (not only
    assigned) in the other; an import in the second half that a new name could be spelled with. Only a filter
    for speed: `transform_in_halves` checks the join itself.
    """
    if _WHOLE_MODULE_RULES.search(head) or _WHOLE_MODULE_RULES.search(tail) or _SPELLING_IMPORT.search(tail):
        return True
    return _reads_names_of(tail, head) or _reads_names_of(head, tail)


def _reads_names_of(reader: bytes, binder: bytes) -> bool:
    """Whether `reader` names (other than as an assignment target) what `binder` defines or assigns at its top."""
    names = {match.group(1) or match.group(2) for match in _TOP_LEVEL_NAME.finditer(binder)}
    if not names:
        return False
    # Each word of `reader` once, then a set intersection: linear in both sizes (one regex of every name was not).
    return not names.isdisjoint(_READ_WORD.findall(reader))


def cut(data: bytes, start: int | None = None) -> int | None:
    """A byte offset from `start` (the middle) on where a line starts a top-level statement, by the bytes alone.

    The line starts with a name at column 0, and the line before it is code that does not continue.
    A cut inside a string or brackets leaves a first half that does not parse, so it is never used.
    """
    at = data.find(b"\n", len(data) // 2 if start is None else start) + 1
    for _ in range(_SEARCHED_LINES):
        end = data.find(b"\n", at)
        if at <= 0 or end < 0:
            return None
        before = data[data.rfind(b"\n", 0, at - 1) + 1 : at - 1].rstrip(b"\r")
        line = data[at:end]
        if (
            _STARTS_STATEMENT.match(line)
            and not _CONTINUES_STATEMENT.match(line)
            and before.strip()
            and not before.lstrip().startswith((b"#", b"@"))
            and not before.endswith(b"\\")
        ):
            return at
        at = end + 1
    return None


@dataclasses.dataclass
class _Half:
    """What migrating one half gave, and what it asked of the module scope."""

    printed: bytes
    new: bytes
    findings: list[w.Finding]
    layout: tuple[str, str]
    """The module's encoding and newline. Not its indent, which only says what a block may leave unwritten."""
    problem: str | None
    """Why this half cannot be joined to the other, or None."""
    needed: list[_imports.Needed]
    """The imports the half's new names need."""
    asked: set[str]
    """The first name of each name used anywhere in the half or asked of its module scope."""
    bound: dict[str, int]
    """How many module-level bindings of each name the half's own statements make."""
    copied: dict[str, int]
    """The same, for the copied imports (the second half)."""
    copyable: list[bytes]
    """The first half's top-level imports of the kind the second half gets a copy of, in order."""
    imported: dict[str, str]
    """The module-level imports and module aliases: name -> qualified name."""
    spelled: set[str]
    """The dotted names the half's new names may be written as (through any of the module's `imported`)."""
    follows_imports: bool
    """Whether the new module has a statement other than an import after its first statement."""


class _HalfCommand(MigrateLossScaleCommand):
    """The command, noting what the module scope was asked, and adding no imports."""

    RECORDS_ASKED = True
    ADDS_IMPORTS = False

    def __init__(self, context: CodemodContext, target: str, source: bytes, copies: int) -> None:
        super().__init__(context, target=target, source=source)
        self.copies = copies
        self.asked: set[str] = set()
        self.spelled: set[str] = set()
        self.bound: dict[str, int] = {}
        self.copied: dict[str, int] = {}

    def _spellings(self, new: str) -> list[str]:
        spellings = super()._spellings(new)
        self.spelled.update(spellings)
        return spellings

    def _place_findings(self, module: cst.Module) -> None:
        super()._place_findings(module)
        # The last step before `transform_module_impl` empties the scopes: note what this half asked of them.
        scope = self._global
        assert scope.asked is not None  # RECORDS_ASKED
        self.asked = {*scope.asked, *scope.tracker.used_roots()}
        copies = {
            id(cst.ensure_type(statement, cst.SimpleStatementLine).body[0]) for statement in module.body[: self.copies]
        }
        for binding in scope.every_binding():
            counts = self.copied if id(binding.node) in copies else self.bound
            counts[binding.name] = counts.get(binding.name, 0) + 1


def _migrate_half(
    source: bytes, target: str, path: str, whole: bytes, copies: int
) -> tuple[_Half, Callable[[list[_imports.Needed]], bytes]]:
    """Migrates one half; `copies` leading statements of `source` are the copied imports (second half).

    Returns the result, and what prints the transformed half with the imports it is given added.
    """
    module = cst.parse_module(source)
    command = _HalfCommand(CodemodContext(filename=path), target, whole, copies)
    new_module = command.transform_module(module)
    printed, new = prints(command, module, new_module)
    problem = None
    if command._loops or command._optimizer_scale_reads or command._other_scale_reads:
        problem = "a custom-loop call or a loss-scale read"
    copyable = [
        (statement, text)
        for statement in module.body
        if _imports.one_import_line(statement)
        and _COPIED_IMPORT.fullmatch(
            text := module.code_for_node(statement.with_changes(leading_lines=())).encode(module.encoding)
        )
    ]
    kept = {id(statement) for statement in new_module.body}
    checked = module.body[:copies] if copies else [statement for statement, _ in copyable]
    if not all(id(statement) in kept for statement in checked):
        problem = "a copied import changed"
    half = _Half(
        printed=printed,
        new=new,
        findings=list(command.findings),
        layout=(module.encoding, module.default_newline),
        problem=problem,
        needed=list(command._needed_imports),
        asked=command.asked,
        bound=command.bound,
        copied=command.copied,
        copyable=[text for _, text in copyable],
        imported={name: qualified for name, (qualified, _, _) in command._bindings.items()},
        spelled=command.spelled,
        follows_imports=any(not _imports.one_import_line(statement) for statement in new_module.body[1:]),
    )

    def with_imports(needed: list[_imports.Needed]) -> bytes:
        joined = _imports.add_imports(new_module, needed, command.context.full_package_name)
        return prints(command, module, joined)[1]

    return half, with_imports


def _by_root(counts: dict[str, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for name, count in counts.items():
        out.setdefault(name.partition(".")[0], {})[name] = count
    return out


def _why_not_joined(first: _Half, second: _Half, copies: list[bytes], copied_lines: int) -> str | None:
    """Why the two halves' results are not those of the whole file, or None when they are."""
    if first.problem or second.problem:
        return first.problem or second.problem
    if first.layout != second.layout:
        return "the halves differ in encoding or newline"
    if first.copyable != copies:
        return "a copied line is not one of the first half's imports"
    for one, other in ((first, second), (second, first)):
        for name, qualified in one.imported.items():
            if other.imported.get(name) != qualified and any(
                spelled == qualified or spelled.startswith(qualified + ".") for spelled in other.spelled
            ):
                return f"a new name could be spelled with `{name}`, imported in one half only"
    if any(finding.line <= copied_lines for finding in second.findings):
        return "a warning on a copied import"
    if (first.needed or second.needed) and not first.follows_imports:
        return "the first half is only imports, so added imports would go elsewhere"
    first_bound, copied = _by_root(first.bound), _by_root(second.copied)
    for root in second.asked:
        if first_bound.get(root, {}) != copied.get(root, {}):
            return f"the second half sees `{root}`, bound in the first"
    shared = first.asked & set(_by_root(second.bound))
    if shared:
        return f"the first half sees `{min(shared)}`, bound in the second"
    return None


def transform_in_halves(
    data: bytes, target: str, path: str, at: int | None = None
) -> tuple[bytes, bytes, list[w.Finding]] | None:
    """`_engine.transform_code(data, ...)` in two processes, or None when the halves cannot be joined.

    `at` is where to cut (tests try many); by default, the first place `cut` finds from the middle on, unless
    `likely_refused` says the halves would not be joined.
    """
    if at is None:
        at = cut(data)
        if at is None or likely_refused(data[:at], data[at:]):
            return None
    head, tail = data[:at], data[at:]
    copies = _COPIED_IMPORT.findall(head)
    prefix = b"".join(copies)
    started = _start(lambda: _migrate_half(prefix + tail, target, path, data, len(copies))[0])
    if started is None:
        return None
    child, reader = started
    try:
        try:
            first, with_imports = _migrate_half(head, target, path, data, 0)
        except Exception:  # noqa: BLE001 - e.g. a syntax error: the whole-file migration reports it
            return None
        with os.fdopen(reader, "rb") as incoming:
            reader = -1
            payload = incoming.read()
    finally:
        if reader >= 0:
            os.close(reader)
        _end(child)
    try:
        second: _Half | None = pickle.loads(payload) if payload else None
    except Exception:  # noqa: BLE001 - a child killed while it wrote (out of memory)
        second = None
    copied_lines = len(_NEWLINE.findall(prefix))
    if (
        second is None
        or first.printed != head
        or second.printed != prefix + tail
        or not second.new.startswith(prefix)
        or _why_not_joined(first, second, copies, copied_lines) is not None
    ):
        return None
    new = with_imports(first.needed + second.needed) if first.needed or second.needed else first.new
    shift = len(_NEWLINE.findall(head)) - copied_lines
    findings = first.findings + [w.Finding(f.line + shift, f.col, f.code) for f in second.findings]
    return data, new + second.new[len(prefix) :], findings


def _start(work: Callable[[], _Half]) -> tuple[int, int] | None:
    """Forks a child that runs `work` and sends its result down a pipe: (its pid, the pipe's end to read), or None."""
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        reader, writer = os.pipe()
    except OSError:
        return None
    try:
        child = os.fork()
    except OSError:  # no memory or process left for a child: one process migrates the file
        os.close(reader)
        os.close(writer)
        return None
    if child == 0:  # pragma: no cover - runs in the forked child, whose coverage is not collected
        try:
            os.close(reader)
            die_with_parent(parent)
            payload = pickle.dumps(work())
        except BaseException:  # noqa: BLE001 - any failure: the parent migrates the whole file
            payload = b""
        try:
            with os.fdopen(writer, "wb") as out:
                out.write(payload)
        finally:
            os._exit(0)
    os.close(writer)
    return child, reader


def _end(child: int) -> None:
    """Reaps the child, killing it first if it still runs."""
    done, _ = os.waitpid(child, os.WNOHANG)
    if done == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def _end_quietly(signum: int, frame: object) -> None:
    os._exit(128 + signum)


def die_with_parent(parent: int) -> None:
    """Makes a worker process end when the run that started it ends, even by SIGKILL, and quietly on Ctrl-C."""
    signal.signal(signal.SIGINT, _end_quietly)  # Ctrl-C reaches the whole process group; the run itself reports it
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
