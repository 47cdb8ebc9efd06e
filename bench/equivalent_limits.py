"""Prints how `lossscale-compat equivalent` copes with hostile files: deep SavedModels and a .keras zip bomb.

SavedModel metadata nested 10k-40k deep (time to the exit-2 refusal: it grows linearly, where the reader
before issue #31 recounted lines at every failed decode and took 24 s at 40k), and a .keras file whose
config.json is 512 MiB of spaces, compressed to about 0.5 MiB (peak memory allocated while refusing it).
No TensorFlow: the CLI reads files without it. Run: `python bench/equivalent_limits.py`.
"""

import os
import tempfile
import time
import tracemalloc
import zipfile

from lossscale_compat import _equivalent_cli


def protobuf_string(field: int, payload: bytes) -> bytes:
    out = b""
    for value in ((field << 3) | 2, len(payload)):
        while True:
            byte, value = value & 0x7F, value >> 7
            out += bytes([byte | (0x80 if value else 0)])
            if not value:
                break
    return out + payload


def time_refusal(path: str) -> float:
    start = time.perf_counter()
    try:
        _equivalent_cli.optimizer_config(path)
    except _equivalent_cli.UnreadableError:
        pass
    else:
        raise SystemExit(f"{path} was read; expected a refusal")
    return time.perf_counter() - start


def saved_models(folder: str) -> None:
    shapes = {
        "unclosed": lambda n: b'{"training_config": ' + b'{"a": ' * n,
        "braces": lambda n: b"{" * n + b'"training_config"',
    }
    for name, metadata in shapes.items():
        for depth in (10_000, 20_000, 40_000):
            path = os.path.join(folder, f"{name}{depth}")
            os.mkdir(path)
            with open(os.path.join(path, "keras_metadata.pb"), "wb") as f:
                f.write(protobuf_string(1, protobuf_string(5, metadata(depth))))
            open(os.path.join(path, "saved_model.pb"), "wb").close()
            print(f"SavedModel, {name:8} {depth:6} deep: refused in {time_refusal(path) * 1000:8.1f} ms")


def zip_bomb(folder: str) -> None:
    path = os.path.join(folder, "bomb.keras")
    chunk, total = b" " * (1 << 20), 512
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("config.json", "w") as member:
        for _ in range(total):
            member.write(chunk)
    tracemalloc.start()
    seconds = time_refusal(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f".keras zip bomb, {os.path.getsize(path) / 2**20:.1f} MiB holding {total} MiB: refused in "
        f"{seconds * 1000:.1f} ms, peak {peak / 2**20:.2f} MiB allocated (limit "
        f"{_equivalent_cli.MAX_CONFIG_BYTES / 2**20:.0f} MiB)"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        saved_models(scratch)
        zip_bomb(scratch)
