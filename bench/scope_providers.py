"""Prints the codemod's time with its own scope analysis (`codemods/_scopes.py`) and with libcst's ScopeProvider.

libcst's ScopeProvider answers the same questions (`scope[name]`, `assignments`, `accesses`,
`get_qualified_names_for`; tests/migrate/test_scopes.py holds the two to the same answers), so it drops in for
`_scopes.scopes`. Each file of the legacy-heavy tree (the TF 2.4 examples and the corpus, as
bench/codemod_speed.py builds it) and one generated file with many sites is migrated whole (`migrate_source`,
both targets) with each, interleaved, best of `--repeats`; the outputs must be byte-identical. Issue #32 keeps
whichever is simpler within 15% of the faster; docs/codemod.md says which, with these figures.

    python bench/scope_providers.py [--repeats 3] [--sites 2000]
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
import types

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from lossscale_compat.codemods import _scan  # noqa: E402 - after the repo is on the path
from lossscale_compat.codemods._engine import migrate_source  # noqa: E402

OURS = _scan._scopes.scopes


def libcst_scopes(module: cst.Module, source: bytes | None = None) -> dict:
    """libcst's ScopeProvider over `module`, in `_scopes.scopes`'s shape: each node to its scope."""
    found = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider))
    found[module].tracker = types.SimpleNamespace(release=lambda: None)  # ours frees its caches; libcst's has none
    return found


def sources(sites: int) -> list[tuple[str, bytes]]:
    """The legacy-heavy tree's files, and one generated file with `sites` legacy constructions."""
    paths = sorted(
        glob.glob(os.path.join(REPO, "examples", "**", "*.py"), recursive=True)
        + glob.glob(os.path.join(REPO, "tests", "migrate", "corpus", "*.py"))
    )
    files = []
    for path in paths:
        with open(path, "rb") as handle:
            files.append((os.path.relpath(path, REPO), handle.read()))
    lines = ["import tensorflow as tf", "mp = tf.keras.mixed_precision.experimental"]
    for number in range(sites):
        lines.append(f"opt_{number} = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.{number % 9 + 1}), 'dynamic')")
    files.append((f"<{sites} sites>", ("\n".join(lines) + "\n").encode()))
    return files


def timed(files: list[tuple[str, bytes]], scopes: object) -> tuple[float, list[bytes]]:
    _scan._scopes.scopes = scopes  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        outputs = [migrate_source(data, target, path).new for path, data in files for target in ("keras3", "tf_keras")]
        return time.perf_counter() - start, outputs
    finally:
        _scan._scopes.scopes = OURS  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sites", type=int, default=2000)
    args = parser.parse_args()
    files = sources(args.sites)
    big, tree = files[-1:], files[:-1]
    print(f"{len(tree)} files of the legacy-heavy tree, and one file with {args.sites} sites; both targets each")
    for label, group in (("tree", tree), ("big file", big)):
        best = {"ours": float("inf"), "libcst": float("inf")}
        outputs = {}
        for _ in range(args.repeats):
            for name, scopes in (("ours", OURS), ("libcst", libcst_scopes)):
                seconds, outputs[name] = timed(group, scopes)
                best[name] = min(best[name], seconds)
        names = [f"{path} ({target})" for path, _ in group for target in ("keras3", "tf_keras")]
        differ = [name for name, a, b in zip(names, outputs["ours"], outputs["libcst"]) if a != b]
        same = "byte-identical" if not differ else f"different for {len(differ)}: {', '.join(differ)}"
        ratio = best["libcst"] / best["ours"]
        print(
            f"{label}: _scopes {best['ours']:.2f} s, libcst's ScopeProvider {best['libcst']:.2f} s "
            f"({ratio:.2f}x); outputs {same}"
        )


if __name__ == "__main__":
    main()
