"""Finding files: directory walks that honour .gitignore and excludes, and pyproject configuration."""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import stat
import sys
from collections.abc import Iterator, Sequence

SUFFIXES = (".py", ".pyi", ".ipynb")
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        ".eggs",
        "__pycache__",
        "build",
        "dist",
        "_build",
        "buck-out",
        ".ipynb_checkpoints",
        "node_modules",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".direnv",
        "__pypackages__",
    }
)
LINK_NOT_FOLLOWED = "a symbolic link to a directory, not followed; name its target to migrate it"
DANGLING_LINK = "a dangling symbolic link (its target does not exist), skipped"
LINK_LOOP = "a symbolic link loop, skipped"


def _glob_to_regex(glob: str) -> str:
    """Translates one gitignore glob (without leading/trailing slash handling) to a regex."""
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class IgnoreRules:
    """A subset of gitignore matching: globs, `**`, `dir/`, `!negation` and anchored `/x`."""

    def __init__(self) -> None:
        self._rules: list[tuple[str, re.Pattern[str], bool, bool]] = []

    def add(self, base: str, lines: Sequence[str]) -> None:
        """Adds patterns read from a .gitignore in directory `base` (relative, '' for the root)."""
        for raw in lines:
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip() or line.startswith("#"):
                continue
            if not line.endswith("\\ "):
                line = line.rstrip(" ")
            negate = line.startswith("!")
            if negate or line.startswith(("\\!", "\\#")):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            regex = _glob_to_regex(line)
            prefix = re.escape(base + "/") if base else ""
            if anchored:
                pattern = re.compile(f"^{prefix}{regex}$")
            else:
                pattern = re.compile(f"^{prefix}(?:.*/)?{regex}$")
            self._rules.append((base, pattern, negate, dir_only))

    def ignored(self, relpath: str, is_dir: bool) -> bool:
        """Returns whether the '/'-separated `relpath` is ignored (last matching rule wins)."""
        result = False
        for _base, pattern, negate, dir_only in self._rules:
            if dir_only and not is_dir:
                continue
            if pattern.match(relpath):
                result = not negate
        return result

    def copy(self) -> IgnoreRules:
        """Returns a copy that can take more rules without changing this one."""
        new = IgnoreRules()
        new._rules = list(self._rules)
        return new


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readlines()
    except OSError:
        return []


def _is_venv(path: str) -> bool:
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


def walk(
    root: str,
    *,
    excludes: Sequence[str] = (),
    respect_gitignore: bool = True,
    skipped: list[tuple[str, str]] | None = None,
    unreadable: list[tuple[str, str]] | None = None,
) -> Iterator[str]:
    """Yields the Python files and notebooks under `root`, sorted, skipping ignored ones.

    Symbolic links to directories are not followed (their targets are either in the tree already or
    outside it), so a walk ends and sees each directory once. They, and entries with a Python suffix
    that are not regular files (FIFOs, sockets, devices), dangling links and link loops, are appended to
    `skipped` as (path, reason). A directory that cannot be listed is appended to `unreadable`, never passed over.
    """
    root = os.path.normpath(root)
    top = _git_root(root) or root
    start = os.path.relpath(root, top).replace(os.sep, "/")
    start = "" if start == "." else start
    excluded = IgnoreRules()
    excluded.add("", list(excludes))
    tree = _Walk(start, excluded, [] if skipped is None else skipped, [] if unreadable is None else unreadable)
    rules = _gitignores_down_to(top, root, start) if respect_gitignore else IgnoreRules()
    stack: list[tuple[str, str, IgnoreRules]] = [(root, start, rules)]
    while stack:
        directory, rel, dir_rules = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name, reverse=True)
        except OSError as error:
            tree.unreadable.append((directory, _cannot_list(error)))
            continue
        if rel != start and respect_gitignore:
            dir_rules = _with_own_gitignore(directory, rel, dir_rules)
        files, dirs = tree.sort(entries, rel, dir_rules)
        stack.extend(dirs)
        yield from sorted(files)


def _gitignores_down_to(top: str, root: str, start: str) -> IgnoreRules:
    """The rules of the .gitignore files from the repository root `top` down to `root` (`start` below `top`)."""
    rules = IgnoreRules()
    parts = start.split("/") if start else []
    for depth in range(len(parts) + 1):
        base = "/".join(parts[:depth])
        rules.add(base, _read_lines(os.path.join(top, base, ".gitignore")))
    if start and rules.ignored(start, True):
        # A directory named explicitly is walked even if it is ignored, as a named file is processed;
        # only its own and its descendants' .gitignore files apply below it.
        rules = IgnoreRules()
        rules.add(start, _read_lines(os.path.join(root, ".gitignore")))
    return rules


def _with_own_gitignore(directory: str, rel: str, rules: IgnoreRules) -> IgnoreRules:
    """`rules`, plus those of `directory`'s own .gitignore if it has one (`rel` is its path from the top)."""
    nested = os.path.join(directory, ".gitignore")
    if not os.path.exists(nested):
        return rules
    rules = rules.copy()
    rules.add(rel, _read_lines(nested))
    return rules


def _skipped_dir(entry: os.DirEntry[str]) -> bool:
    """Whether a directory is never walked: tool caches, builds, virtual environments."""
    return entry.name in SKIP_DIRS or entry.name.endswith(".egg-info") or _is_venv(entry.path)


@dataclasses.dataclass
class _Walk:
    """What one walk holds fixed (where it started, the excludes), and where it notes the paths it does not read."""

    start: str
    excluded: IgnoreRules
    skipped: list[tuple[str, str]]
    unreadable: list[tuple[str, str]]

    def sort(
        self, entries: Sequence[os.DirEntry[str]], rel: str, rules: IgnoreRules
    ) -> tuple[list[str], list[tuple[str, str, IgnoreRules]]]:
        """Splits a directory's entries into the files to read and the directories to walk; notes the others."""
        files: list[str] = []
        dirs: list[tuple[str, str, IgnoreRules]] = []
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_link = entry.is_symlink()
            except OSError as error:
                self.unreadable.append((entry.path, _cannot_list(error)))
                continue
            below = child[len(self.start) + 1 :] if self.start else child
            if rules.ignored(child, is_dir) or self.excluded.ignored(below, is_dir):
                continue
            if is_dir:
                if not _skipped_dir(entry):
                    dirs.append((entry.path, child, rules))
            elif is_link and os.path.isdir(entry.path):
                self.skipped.append((entry.path, LINK_NOT_FOLLOWED))
            elif entry.name.endswith(SUFFIXES):
                reason = (broken_link(entry.path) if is_link else None) or _not_regular(entry.path)
                if reason is None:
                    files.append(entry.path)
                else:
                    self.skipped.append((entry.path, reason))
        return files, dirs


def _cannot_list(error: OSError) -> str:
    return (
        f"cannot read this directory ({error.strerror or error}), so its files were not migrated. Instead, "
        "make it readable to you, or leave it out with --exclude"
    )


def broken_link(path: str) -> str | None:
    """Says why the symbolic link `path` leads to no file (dangling, or a loop), or None if it leads to one."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return LINK_LOOP
        if error.errno == errno.ENOENT:
            return DANGLING_LINK
    return None  # reading it will say what else is wrong


def _not_regular(path: str) -> str | None:
    """Returns why `path` (links followed) is not a regular file to migrate, or None if it is one."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # reading it will say what is wrong
    if stat.S_ISREG(mode):
        return None
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"not a regular file ({kind}), skipped"


def _git_root(path: str) -> str | None:
    directory = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def find_config(start: str) -> tuple[str | None, dict[str, object], str | None]:
    """Finds `[tool.lossscale-compat]` in the nearest pyproject.toml above `start`.

    Returns (path of pyproject.toml or None, the table, a note if the table could not be read).
    """
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return (candidate, *_load_table(candidate))
        if os.path.lexists(candidate):  # a folder, a FIFO, a link loop or a link to nothing: never read, never passed
            return (
                candidate,
                {},
                (
                    f"{candidate}: not a regular file, so its [tool.lossscale-compat] options (its excludes among "
                    "them) are unknown and no file was read. Instead, make it a file, or run from a directory outside "
                    "its project"
                ),
            )
        if os.path.exists(os.path.join(directory, ".git")):
            return None, {}, None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None, {}, None
        directory = parent


def _load_table(path: str) -> tuple[dict[str, object], str | None]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - depends on the interpreter
        try:
            import tomli as tomllib
        except ImportError:
            with open(path, "rb") as handle:
                if b"[tool.lossscale-compat]" in handle.read():
                    return {}, (
                        f"{path}: [tool.lossscale-compat] cannot be read: reading TOML needs Python 3.11 "
                        "or the `tomli` package. Instead, install tomli, or run on Python 3.11 or later."
                    )
            return {}, None
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, ValueError, RecursionError, MemoryError) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error).splitlines()[0]
        return {}, (
            f"{path}: cannot read it ({why}), so its [tool.lossscale-compat] options (its excludes among them) are "
            "unknown and no file was read. Instead, fix the file, or run from a directory outside its project"
        )
    tool = data.get("tool", {})
    table = tool.get("lossscale-compat", {}) if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return {}, f"{path}: [tool.lossscale-compat] must be a table, so no file was read. Instead, write it as one"
    return table, None
