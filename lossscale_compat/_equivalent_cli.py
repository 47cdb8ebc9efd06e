"""`lossscale-compat equivalent OLD NEW`: whether two saved optimizers are configured alike, for CI scripts.

Each side is a `.h5` file, a `.keras` file, a SavedModel directory, or a JSON file holding an optimizer
config (or a model config with its `training_config`/`compile_config`). Exit 0: equivalent; 1: not, with
the differences on stdout; 2: a side could not be read (or holds code, refused without `--no-safe-mode`),
with a one-line error on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import warnings
import zipfile
import zlib
from collections.abc import Sequence
from typing import Any, NoReturn

EXIT_EQUIVALENT, EXIT_DIFFERENT, EXIT_ERROR = 0, 1, 2


class UnreadableError(Exception):
    """A side that holds no optimizer config we can read; the message is the one line shown."""


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (exit 2) that says where the usage is."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}. Run `{self.prog} --help` for the usage.\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(
        prog="lossscale-compat equivalent",
        description="Exit 0 if two saved optimizers are configured alike, 1 (with the differences) if not.",
    )
    parser.add_argument("old", help=".h5, .keras, SavedModel directory or JSON config")
    parser.add_argument("new", help=".h5, .keras, SavedModel directory or JSON config")
    parser.add_argument(
        "--no-safe-mode",
        dest="safe_mode",
        action="store_false",
        help="load optimizer configs holding code (serialized lambdas) that Keras would run; only for trusted files",
    )
    args = parser.parse_args(argv)
    try:
        old, new = optimizer_config(args.old), optimizer_config(args.new)
        if args.safe_mode:
            for path, config in ((args.old, old), (args.new, new)):
                _refuse_code(config, path)
    except UnreadableError as error:
        print(f"lossscale-compat equivalent: {error}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - a file we could not read is exit 2, never 1 ("not equivalent")
        print(f"lossscale-compat equivalent: {_cannot_read(args, error)}", file=sys.stderr)
        return EXIT_ERROR
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from lossscale_compat import _equivalence

    summaries = []
    for path, config in ((args.old, old), (args.new, new)):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                summaries.append(_equivalence.config_summary(config))
        except Exception as error:  # noqa: BLE001 - whatever a hand-written config makes Keras raise: one line
            print(
                f"lossscale-compat equivalent: {path}: cannot load an optimizer config: {_one_line(error)}",
                file=sys.stderr,
            )
            return EXIT_ERROR
        for warning in caught:  # said of the file, in one line; a warning's own place would be this command's
            if not issubclass(warning.category, (DeprecationWarning, PendingDeprecationWarning)):  # hidden by default
                print(f"lossscale-compat equivalent: {path}: warning: {_one_line(warning.message)}", file=sys.stderr)
    try:
        differences = _equivalence.summary_differences(*summaries)
    except Exception as error:  # noqa: BLE001 - settings of types no saved optimizer holds
        print(f"lossscale-compat equivalent: cannot compare the two configs: {_one_line(error)}", file=sys.stderr)
        return EXIT_ERROR
    if differences:
        print("The optimizers are not equivalent:\n  " + "\n  ".join(differences))
        return EXIT_DIFFERENT
    print(f"{args.old} and {args.new} configure equivalent optimizers.")
    note = _training_note(summaries[0])
    if note:
        print(note)
    return EXIT_EQUIVALENT


def _training_note(summary: dict[str, Any]) -> str:
    """What configured alike does not promise for these settings on this stack: "" where it promises training too."""
    from lossscale_compat import _flavour
    from lossscale_compat._deprecation import KERAS3_DYNAMIC_DIFFERENCE

    if summary.get("loss_scaling") != "dynamic" or not _flavour.has_keras3_loss_scaling():
        return ""  # Keras 2's own class trains as TF 2.4's did; a fixed scale skips no step
    return f"Note: {KERAS3_DYNAMIC_DIFFERENCE}"


def _cannot_read(args: argparse.Namespace, error: BaseException) -> str:
    """One line for an error no reader below names: which side, if the error says, and what it is."""
    where = next((path for path in (args.old, args.new) if path in str(error)), f"{args.old} or {args.new}")
    return f"{where}: cannot read an optimizer config from it ({type(error).__name__}: {_one_line(error)})."


def optimizer_config(path: str) -> dict[str, Any]:
    """The optimizer config saved in `path`, or UnreadableError saying what is wrong."""
    if os.path.isdir(path):
        return _from_model_config(_saved_model_metadata(path), path)
    if not os.path.isfile(path):
        what = "no such file or directory"
        if os.path.exists(path):
            mode = os.stat(path).st_mode
            what = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            what = f"not a regular file ({what})"
        raise UnreadableError(f"{path}: {what}; pass a .h5, .keras, SavedModel directory or JSON file.")
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as error:
        raise UnreadableError(f"{path}: cannot read it ({error.strerror or error}).") from error
    if head.startswith(b"\x89HDF"):
        return _from_model_config(_h5_training_config(path), path)
    if head.startswith(b"PK"):
        return _from_model_config(_keras_zip_config(path), path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except ValueError as error:  # UnicodeDecodeError, JSONDecodeError, an integer over Python's digit limit
        raise UnreadableError(f"{path}: not a .h5, .keras or JSON file we can read ({_one_line(error)}).") from error
    except RecursionError as error:
        raise UnreadableError(_TOO_DEEP.format(path=path)) from error
    if not isinstance(data, dict):
        raise UnreadableError(f"{path}: expected a JSON object holding an optimizer config, got {type(data).__name__}.")
    return _from_model_config(data, path)


def _refuse_code(config: dict[str, Any], path: str) -> None:
    from lossscale_compat import _safe_config

    try:
        _safe_config.refuse_code(config, path, flag="--no-safe-mode")
    except ValueError as error:
        raise UnreadableError(str(error)) from None


_TOO_DEEP = "{path}: its JSON is nested too deeply to be an optimizer or model config; pass the file Keras saved."


def _from_model_config(data: dict[str, Any], path: str) -> dict[str, Any]:
    """The optimizer config in a model's training config (H5, SavedModel), compile config (.keras), or itself."""
    if "training_config" in data:
        data = _object(data["training_config"] or {}, path, "training_config")
    if "optimizer_config" in data:
        data = data["optimizer_config"]
    elif "compile_config" in data:
        data = _object(data["compile_config"] or {}, path, "compile_config").get("optimizer") or {}
    if not isinstance(data, dict) or not data:
        raise UnreadableError(f"{path}: holds no optimizer config; save the model compiled, with its optimizer.")
    name = data.get("class_name")
    if name is not None and not isinstance(name, str):
        raise UnreadableError(
            f"{path}: its optimizer's class_name is a {type(name).__name__}, not a name; pass the file Keras saved."
        )
    return data


def _object(value: Any, path: str, key: str) -> dict[str, Any]:
    """`value`, the JSON object under `key`; UnreadableError when it is of another type."""
    if not isinstance(value, dict):
        raise UnreadableError(
            f"{path}: its {key} is a {type(value).__name__}, not a JSON object; pass the file Keras saved."
        )
    return value


def _h5_training_config(path: str) -> dict[str, Any]:
    import h5py  # a Keras dependency on every supported stack

    try:
        with h5py.File(path, "r") as f:
            text = f.attrs.get("training_config")
    except (OSError, ValueError, KeyError, RuntimeError) as error:  # h5py's errors on a damaged file
        raise UnreadableError(f"{path}: not a readable HDF5 file ({_one_line(error)}).") from error
    if text is None:
        raise UnreadableError(f"{path}: holds no optimizer config; save the model compiled, with its optimizer.")
    if not isinstance(text, (str, bytes)):
        raise UnreadableError(
            f"{path}: its training_config attribute is a {type(text).__name__}, not the JSON text Keras writes; "
            "pass the file Keras saved."
        )
    try:
        return {"training_config": json.loads(text.decode() if isinstance(text, bytes) else text)}
    except ValueError as error:  # UnicodeDecodeError, JSONDecodeError, an integer over Python's digit limit
        raise UnreadableError(f"{path}: its training config is not JSON we can read ({_one_line(error)}).") from error
    except RecursionError as error:
        raise UnreadableError(_TOO_DEEP.format(path=path)) from error


# The largest config.json read from a .keras zip, decompressed: far above any real model's config.
MAX_CONFIG_BYTES = 64 * 1024 * 1024


def _keras_zip_config(path: str) -> dict[str, Any]:
    try:
        with zipfile.ZipFile(path) as archive:
            size = archive.getinfo("config.json").file_size
            if size > MAX_CONFIG_BYTES:
                raise UnreadableError(_TOO_BIG.format(path=path, size=size))
            with archive.open("config.json") as member:
                text = member.read(MAX_CONFIG_BYTES + 1)  # the size above is the header's word: read no more
            if len(text) > MAX_CONFIG_BYTES:
                raise UnreadableError(_TOO_BIG.format(path=path, size=len(text)))
            data = json.loads(text)
    except (
        zipfile.BadZipFile,
        KeyError,
        ValueError,
        OSError,
        EOFError,
        RuntimeError,
        NotImplementedError,
        zlib.error,
    ) as error:  # bad JSON, over-long integers; encrypted (RuntimeError), an unknown or bad method
        what = f"not a .keras file with a config.json we can read ({_one_line(error)})"
        raise UnreadableError(f"{path}: {what}.") from error
    except RecursionError as error:
        raise UnreadableError(_TOO_DEEP.format(path=path)) from error
    return _object(data, path, "config.json")


_TOO_BIG = (
    "{path}: its config.json would be {size} bytes decompressed, over the limit of "
    f"{MAX_CONFIG_BYTES} bytes; a .keras file Keras saved holds a far smaller one."
)


def _saved_model_metadata(path: str) -> dict[str, Any]:
    """The Keras model metadata of a SavedModel: in keras_metadata.pb (TF >= 2.5) or saved_model.pb (TF 2.4).

    Keras stores it as a JSON string in a protobuf string field; it is found by walking the protobuf's
    length-delimited fields that hold the `"training_config"` key (no schema: Keras' moved between versions).
    """
    for name in ("keras_metadata.pb", "saved_model.pb"):
        file = os.path.join(path, name)
        if os.path.isfile(file):
            try:
                with open(file, "rb") as f:
                    data = f.read()
            except OSError as error:
                raise UnreadableError(f"{file}: cannot read it ({error.strerror or error}).") from error
            metadata = _json_object_with(data, b'"training_config"')
            if metadata is not None:
                return metadata
    if not os.path.isfile(os.path.join(path, "saved_model.pb")):
        raise UnreadableError(f"{path}: a directory without saved_model.pb; pass a SavedModel directory.")
    raise UnreadableError(
        f"{path}: this SavedModel holds no Keras training config; save the model compiled, with model.save()."
    )


def _json_object_with(data: bytes, key: bytes) -> dict[str, Any] | None:
    """The JSON object holding top-level `key` in a protobuf string field of `data`, in time linear in its size."""
    fields = [(0, len(data))]
    for _ in range(_MAX_PROTOBUF_DEPTH):  # Keras' metadata is a string 5 messages deep in saved_model.pb
        inner = []
        for start, end in fields:
            for field_start, field_end in _length_delimited_fields(data, start, end):
                if data.find(key, field_start, field_end) == -1:
                    continue  # only a field holding the key can be, or hold, the metadata
                if data[field_start : field_start + 1] == b"{":
                    value = _json_or_none(data[field_start:field_end])
                    if isinstance(value, dict) and "training_config" in value:
                        return value
                inner.append((field_start, field_end))
        fields = inner
    return None


_MAX_PROTOBUF_DEPTH = 8


def _length_delimited_fields(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of the length-delimited fields of the protobuf message in `data[start:end]`; [] if it is not one."""
    spans = []
    at = start
    try:
        while at < end:
            tag, at = _varint(data, at, end)
            wire_type = tag & 7
            if wire_type == 0:
                _, at = _varint(data, at, end)
            elif wire_type in (1, 5):
                at += 8 if wire_type == 1 else 4
            elif wire_type == 2:
                length, at = _varint(data, at, end)
                spans.append((at, at + length))
                at += length
            else:
                return []  # groups (deprecated) or not a message
        return spans if at == end else []
    except IndexError:
        return []


def _varint(data: bytes, at: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= end or shift > 63:
            raise IndexError("not a varint")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at


def _json_or_none(text: bytes) -> Any:
    try:
        return json.loads(text.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):  # not JSON, an over-long integer, or nested too deeply
        return None


def _one_line(error: object) -> str:
    lines: list[str] = [line for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
