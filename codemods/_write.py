"""Reading and replacing files as an editor would: regular files only, only if unchanged, owner, mode and links kept."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable

TEMP_PREFIX = ".lossscale-compat-"
_TEMP_NAME = re.compile(r"^\.lossscale-compat-(\d+)-[A-Za-z0-9_]+\.tmp$")


class NotWritten(Exception):
    """A file that is left alone, with the reason as its message."""


class NotRegular(OSError):
    """A path that is not a regular file (a FIFO, a socket, a device)."""


def kind(mode: int) -> str:
    """Names the file type of an `st_mode` that is not a regular file or a directory."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def read_regular(path: str) -> bytes:
    """Returns the bytes of the regular file at `path`; raises NotRegular without blocking on a FIFO."""
    data = read_bounded(path, 0)
    assert isinstance(data, bytes)
    return data


class Mapped:
    """A file over a size bound, mapped rather than read: `word in it` scans it without holding it in memory."""

    def __init__(self, fd: int, size: int) -> None:
        import mmap

        self.size = size
        self._map = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)

    def __contains__(self, word: bytes) -> bool:
        return self._map.find(word) != -1


def read_bounded(path: str, limit: int) -> bytes | Mapped:
    """The bytes of the regular file at `path`, or, when it is over `limit` bytes (0: no bound), the file Mapped, never
    read whole; raises NotRegular without blocking on a FIFO."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"not a regular file ({kind(info.st_mode)}), skipped")
        if limit and info.st_size > limit:
            return Mapped(fd, info.st_size)
        return read_all(fd)
    finally:
        os.close(fd)


def inside(real: str, roots: Iterable[str]) -> bool:
    """Returns whether the resolved path `real` is one of `roots` or below one of them."""
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def remove_stale_temps(directory: str, started: float) -> None:
    """Removes our temporary files in `directory` left by a run that was killed (its process is gone)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        match = _TEMP_NAME.match(name)
        if not match or int(match.group(1)) == os.getpid() or _pid_alive(int(match.group(1))):
            continue
        path = os.path.join(directory, name)
        try:
            if os.lstat(path).st_mtime < started:
                os.unlink(path)
        except OSError:
            pass


def _can_keep_owner(info: os.stat_result) -> bool:
    if not hasattr(os, "geteuid") or os.geteuid() == 0:  # no owners to keep (Windows), or root
        return True
    return info.st_uid == os.geteuid() and (info.st_gid == os.getegid() or info.st_gid in os.getgroups())


def refusal(real: str, info: os.stat_result | None = None) -> str | None:
    """Says why `replace` will not write the file `real`, or returns None; `--check` and `--diff` ask it too."""
    info = info or os.stat(real)
    if not stat.S_ISREG(info.st_mode):
        return f"it is now {kind(info.st_mode)}"
    if not os.access(real, os.W_OK) or not info.st_mode & 0o222:
        return (
            f"the file is read-only for you (mode {stat.S_IMODE(info.st_mode):04o}, "
            f"owner uid {info.st_uid}); make it writable and run again"
        )
    return None


def replace(real: str, old: bytes, new: bytes, cleaned: set[str] | None = None, started: float = 0.0) -> str:
    """Replaces the file `real` (a resolved path) holding `old` by `new`; returns how ("replaced" or "in place").

    Raises NotWritten when the file is read-only for this user, or no longer holds `old` (edited
    meanwhile). A file with other hard links, whose owner or group this user cannot give a new file, or
    in a directory this user cannot write, is written in place, as editors do; otherwise a temporary
    file in the same directory takes the owner and mode and is renamed over it.
    """
    info = os.stat(real)
    why = refusal(real, info)
    if why is not None:
        raise NotWritten(f"not written: {why}")
    directory = os.path.dirname(real) or "."
    if info.st_nlink > 1 or not _can_keep_owner(info) or not os.access(directory, os.W_OK | os.X_OK):
        _write_in_place(real, old, new)
        return "in place"
    if cleaned is not None and directory not in cleaned:
        cleaned.add(directory)
        remove_stale_temps(directory, started or time.time())

    def keep_owner_and_mode(temp: str) -> None:
        if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
            os.chown(temp, info.st_uid if os.geteuid() == 0 else -1, info.st_gid)
        os.chmod(temp, stat.S_IMODE(info.st_mode))  # after chown, which clears set-id bits
        if read_regular(real) != old:
            raise NotWritten(_CHANGED)

    _replace_with_temp(_new_temp(directory), real, new, keep_owner_and_mode)
    return "replaced"


def _new_temp(directory: str) -> tuple[int, str]:
    """A new, empty temporary file in `directory`, named so that `remove_stale_temps` knows it: (fd, path)."""
    return tempfile.mkstemp(dir=directory, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".tmp")


def _replace_with_temp(temp: tuple[int, str], target: str, data: bytes, prepare: Callable[[str], None]) -> None:
    """Fills the temporary file with `data` on disk, calls `prepare` on its path and renames it over `target`;
    the temporary file never outlives a failure."""
    fd, path = temp
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        prepare(path)
        os.replace(path, target)
    except BaseException:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise


_CHANGED = "not written: the file changed on disk while it was migrated; run again to migrate the new content"


def _write_in_place(real: str, old: bytes, new: bytes) -> None:
    """Overwrites the file's bytes; space is reserved first, and the old bytes put back if a write fails anyway."""
    with open(real, "r+b", buffering=0) as handle:
        if read_all(handle.fileno()) != old:
            raise NotWritten(_CHANGED)
        fd = handle.fileno()
        reserve(fd, len(old), len(new))  # a full disk stops us here, before a byte of the file changed
        try:
            _put(fd, new)
        except BaseException:
            try:
                _put(fd, old)  # into blocks the file held already
            except OSError:
                pass
            raise


def read_all(fd: int) -> bytes:
    """Reads `fd` from its current offset to the end."""
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _put(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def reserve(fd: int, size: int, length: int) -> None:
    """Allocates disk blocks for the first `length` bytes of the file `fd`, `size` bytes long now.

    Raises OSError (ENOSPC) when the disk cannot hold them, with the file's size as it was. Where the file
    system cannot reserve space (posix_fallocate unsupported), returns and the caller relies on putting
    the old bytes back.
    """
    allocate = getattr(os, "posix_fallocate", None)
    if allocate is None or length <= 0:
        return
    try:
        allocate(fd, 0, length)
    except OSError as error:
        if error.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS, getattr(errno, "ENOTSUP", -1)):
            return
        if os.fstat(fd).st_size != size:
            os.ftruncate(fd, size)
        raise


SPECIAL_ROOTS = ("/dev", "/proc", "/sys")
"""File systems whose entries are not files to hold a report: devices, and the kernel's views of processes."""


def _link_chain(path: str) -> list[str]:
    """`path` and each place its symbolic links lead to, in turn (a link into /proc can lead on to a regular file)."""
    chain = [os.path.abspath(path)]
    for _ in range(40):  # the kernel's own bound on links followed
        current = chain[-1]
        directory = os.path.realpath(os.path.dirname(current))
        chain.append(os.path.join(directory, os.path.basename(current)))
        try:
            target = os.readlink(chain[-1])
        except OSError:
            break  # not a link (or nothing there): the end of the chain
        chain.append(os.path.normpath(os.path.join(directory, target)))
    return chain


def output_refusal(path: str) -> str | None:
    """Says why `path` is not a place to write a whole regular file (a device, a FIFO, a link into /proc), or None.

    Asked before any work, and again just before the write; a symbolic link to a regular file is written through.
    """
    for where in _link_chain(path):
        for root in SPECIAL_ROOTS:
            if inside(where, [root]):
                return f"it leads to {where}, under {root}, not a regular file"
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return None  # a new file, or one that writing will say is unreadable
    if stat.S_ISDIR(mode):
        return "it is a directory"
    return None if stat.S_ISREG(mode) else f"it is {kind(mode)}, not a regular file"


def write_whole(path: str, data: bytes) -> None:
    """Writes `data` as the whole regular file `path` (a report), through a symbolic link: a temporary file renamed
    over it, so that it holds the old bytes or the new ones, never part (and is never left empty or new and empty on
    a full disk). Raises NotRegular, and writes nothing, where `output_refusal` says no."""
    why = output_refusal(path)
    if why is not None:
        raise NotRegular(why)
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    try:
        temp = _new_temp(directory)
    except PermissionError:  # a directory we cannot write, holding a file we can
        with open(path, "r+b", buffering=0) as handle:
            size = os.fstat(handle.fileno()).st_size
            reserve(handle.fileno(), size, len(data))
            _put(handle.fileno(), data)
        return
    _replace_with_temp(temp, path, data, lambda temp_path: os.chmod(temp_path, mode))
