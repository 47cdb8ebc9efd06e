"""Judges the codemod's output on a folder of files by importing every name it reaches on the real stacks.

    python bench/unseen_oracle.py DIR [DIR ...]          # both targets; prints a table and the problems found
    python bench/unseen_oracle.py --as-is DIR            # the files unmigrated: shows the oracle sees dead names

An oracle independent of the verifier's recorded names (codemods/target_names/): for each file and target it
migrates the file (`migrate_source`, as `migrate` does; the CLI is run too, to catch a crash), then collects every
dotted name the output reaches from an import of tensorflow, keras, tf_keras or lossscale_compat (import aliases,
from-imports, `x = tf.keras` aliases, attribute chains, `importlib.import_module`/`getattr` with literal strings)
and resolves each by importlib + getattr in a subprocess on the target's stack (`--keras3-python`,
`--tf-keras-python`, the latter with TF_USE_LEGACY_KERAS=1) and on TF 2.4.0 (`--tf24-python`).

A mixed-precision name (IN_SCOPE) that does not resolve on the target, with no finding on its line, is a silent
dead name (issue 30's bug class). Other unresolved names are counted apart: those TF 2.4 lacks too (TF 1 code under
`import tensorflow as tf`) and those outside loss scaling (TF 2.16's estimator, Keras 3's removals). Not checked:
methods called on objects (`optimizer.get_scaled_loss`), which no dotted name reaches.
Also reported: a file the codemod or the CLI fails on, an output that does not parse, a second pass that changes
the output. Aliases are read file-wide (not per scope), so a name bound twice can be misread; check a hit by hand.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

ROOTS = ("tensorflow", "keras", "tf_keras", "lossscale_compat")
IN_SCOPE = ("mixed_precision", "loss_scale", "LossScale", "lossscale_compat")
"""A name with one of these in it is the codemod's to handle; other dead names (TF 2.16's estimator, Keras 3's
missing backend functions) are counted apart as outside loss scaling."""
NOX = Path(__file__).resolve().parent.parent / ".nox"  # the repository's nox venvs
PYTHONS = {
    "keras3": NOX / "tests-stack-tf221-keras3" / "bin" / "python",
    "tf_keras": NOX / "tests-stack-tf221-tfkeras" / "bin" / "python",
}
TF24_PYTHON = Path("/work/tf24/bin/python")


def _dotted(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"], or None when the chain does not start at a plain name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


class _Names(ast.NodeVisitor):
    """Collects (line, dotted name) for every name reached from an import of one of ROOTS."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.found: set[tuple[int, str]] = set()

    def _add(self, line: int, name: str) -> None:
        if name.split(".")[0] in ROOTS:
            self.found.add((line, name))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node.lineno, alias.name)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{node.module}.{alias.name}"
            self._add(node.lineno, full)
            if node.module.split(".")[0] in ROOTS:
                self.aliases[alias.asname or alias.name] = full

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        name = self._resolve(node.value)
        if name and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.aliases[node.targets[0].id] = name

    def _resolve(self, node: ast.AST) -> str | None:
        parts = _dotted(node)
        if not parts or parts[0] not in self.aliases:
            return None
        return ".".join([self.aliases[parts[0]], *parts[1:]])

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self._resolve(node)
        if name:
            self._add(node.lineno, name)
            return  # the longest chain; the resolver checks each prefix
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        literal = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        func = _dotted(node.func)
        if func and func[-1] == "import_module" and literal:
            self._add(node.lineno, literal[0])
        elif func == ["getattr"] and len(node.args) >= 2 and len(literal) == 1:
            base = self._resolve(node.args[0])
            if base:
                self._add(node.lineno, f"{base}.{literal[0]}")
        self.generic_visit(node)


def names_in(source: str) -> list[tuple[int, str]]:
    """Every (line, dotted name) the source reaches from ROOTS, module names kept as written."""
    visitor = _Names()
    visitor.visit(ast.parse(source))
    return sorted(visitor.found)


def resolve(name: str) -> str | None:
    """None when `name` resolves (module import, then getattr), else what failed. Stops at an instance."""
    parts = name.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except Exception as error:  # noqa: BLE001 -- any failure is the answer
        return f"{parts[0]}: {type(error).__name__}"
    for i, part in enumerate(parts[1:], start=2):
        if not isinstance(obj, (type, types.ModuleType)):  # tf.keras is a lazy loader, a module subclass
            return None  # an instance's attributes are not the API's names
        prefix = ".".join(parts[:i])
        try:
            obj = getattr(obj, part)
            continue
        except Exception:  # noqa: BLE001
            pass
        try:
            obj = importlib.import_module(prefix)
        except Exception:  # noqa: BLE001
            return f"{prefix} missing"
    return None


def _resolve_stdin() -> None:
    """Reads a JSON list of names, prints a JSON object name -> failure (or null)."""
    import warnings

    warnings.simplefilter("ignore")
    names = json.load(sys.stdin)
    print("\n" + json.dumps({n: resolve(n) for n in names}))


def resolve_on(python: Path, names: list[str], env: dict[str, str] | None = None) -> dict[str, str | None]:
    """Resolves `names` in a subprocess of `python` (this script with --resolve)."""
    run_env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})}
    out = subprocess.run(
        [str(python), __file__, "--resolve"],
        input=json.dumps(sorted(set(names))),
        capture_output=True,
        text=True,
        env=run_env,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _cli_ok(python: Path, path: Path, target: str) -> bool:
    """Whether `lossscale-compat migrate --diff --format json` runs on the file and prints a non-error report."""
    cmd = [str(python), "-m", "lossscale_compat", "migrate", "--diff", "--target", target]
    done = subprocess.run([*cmd, "--format", "json", str(path)], check=False, capture_output=True, text=True)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return False
    return done.returncode in (0, 1) and not report["summary"]["error"]


def judge(path: Path, target: str, as_is: bool = False) -> dict:
    """Migrates one file (unless `as_is`) and collects what the oracle checks, except name resolution."""
    from lossscale_compat.codemods import migrate_source

    row: dict = {"file": path.name, "target": target, "problems": []}
    if as_is:
        row.update(status="as-is", names=names_in(path.read_text()), warned=[])
        return row
    result = migrate_source(path.read_bytes(), target, str(path))
    row["status"] = result.status
    if result.status == "error":
        row["problems"].append(f"codemod error: {result.error}")
        return row
    new = (result.new or result.old).decode()
    try:
        row["names"] = names_in(new)
    except SyntaxError as error:
        row["problems"].append(f"output does not parse: {error}")
        return row
    row["warned"] = sorted({result.new_line(f.line) for f in result.findings})
    row["findings"] = len(result.findings)
    if result.status == "changed" and migrate_source(result.new, target, str(path)).new != result.new:
        row["problems"].append("a second pass changes the output")
    if not _cli_ok(PYTHONS[target], path, target):
        row["problems"].append("the CLI fails on the file")
    return row


def _dead(rows: list[dict], target: str, on_target: dict, on_tf24: dict) -> None:
    """Adds each row's unresolved names: a mixed-precision one with no finding on its line is a problem (TF 2.2's
    and 2.3's private paths included); the rest are counted: not on TF 2.4 either, or outside loss scaling."""
    for row in rows:
        row["dead"], row["not_tf24"], row["other"] = [], [], []
        for line, name in row.get("names", []):
            if on_target.get(name) is None:
                continue
            if not any(word in name for word in IN_SCOPE):
                key = "not_tf24" if on_tf24.get(name) is not None else "other"
                row[key].append(f"{line}:{name}")
            elif line in row["warned"]:
                row["dead"].append(f"{line}:{name} (warned)")
            else:
                row["problems"].append(f"silent dead name, line {line}: {name} ({on_target[name]}) [{target}]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--resolve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--as-is", action="store_true", help="judge the files unmigrated")
    parser.add_argument("--keras3-python", type=Path, default=PYTHONS["keras3"])
    parser.add_argument("--tf-keras-python", type=Path, default=PYTHONS["tf_keras"])
    parser.add_argument("--tf24-python", type=Path, default=TF24_PYTHON)
    args = parser.parse_args()
    if args.resolve:
        _resolve_stdin()
        return 0
    PYTHONS.update({"keras3": args.keras3_python, "tf_keras": args.tf_keras_python})
    files = sorted(p for d in args.dirs for p in d.glob("*.py"))
    total = 0
    print(f"{'file':44} {'target':8} {'status':9} names warned-dead not-on-2.4 other-dead problems")
    for target in PYTHONS:
        rows = [judge(path, target, args.as_is) for path in files]
        names = [n for row in rows for _, n in row.get("names", [])]
        env = {"TF_USE_LEGACY_KERAS": "1"} if target == "tf_keras" else None
        _dead(rows, target, resolve_on(PYTHONS[target], names, env), resolve_on(args.tf24_python, names))
        for row in rows:
            counts = [len(row.get(key, [])) for key in ("names", "dead", "not_tf24", "other")]
            print(f"{row['file']:44} {target:8} {row['status']:9} {counts[0]:5} {counts[1]:11} {counts[2]:10}", end="")
            print(f" {counts[3]:10} {row['problems']}")
            for key in ("dead", "other"):
                for item in row.get(key, []):
                    print(f"    {key}: {item}")
            total += len(row["problems"])
    print(f"{len(files)} files, 2 targets: {total} problems")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
