"""`lossscale-compat compare OLD NEW`: two traces of `record`, side by side, and the first step where they part.

Needs neither TensorFlow nor Python 3.9 (it runs on TF 2.4.0's stack too): the standard library, and matplotlib
for `--plot`. Tolerances and why: docs/equivalence.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import stat
import sys
from collections.abc import Sequence
from typing import Any

from lossscale_compat._trace import FORMAT, VERSION

EXIT_SAME, EXIT_DIFFERENT, EXIT_BAD_INPUT = 0, 1, 2
# Float16's machine epsilon: a float16 kernel rounds its result once, so two CPUs (or TF 2.4.0's Eigen kernels and
# today's oneDNN ones) differ by at most this much, relative, per step; weights carry it on, so after step k by
# (k + 1) of it (docs/equivalence.md, docs/goldens.md).
FLOAT16_EPSILON = 2.0**-10
# What float32 arithmetic itself leaves over, for values near 0 (a zero-initialized bias), per step.
FLOAT32_ATOL = 1e-6
USAGE = "usage: lossscale-compat compare [--rtol R] [--atol A] [--plot FILE.png] [--format text|json] OLD NEW"
# The Keras 3 class whose `iterations` leaves skipped steps out (docs/codemod.md, LSC118).
KERAS3_OWN_CLASS = "keras.src.optimizers.loss_scale_optimizer.LossScaleOptimizer"


class TraceError(ValueError):
    """A file that is not a whole, unedited trace, or two traces that cannot be compared (exit 2)."""


class Trace:
    """A trace file, read and checked: its header, optimizers, steps and end line."""

    def __init__(
        self,
        path: str,
        header: dict[str, Any],
        optimizers: list[dict[str, Any]],
        steps: list[dict[str, Any]],
        end: dict[str, Any],
    ) -> None:
        self.path, self.header, self.optimizers, self.steps, self.end = path, header, optimizers, steps, end

    @property
    def complete(self) -> bool:
        return self.end["end"] == "complete"

    def describe(self) -> str:
        stack = self.header.get("stack", {})
        return (
            f"TensorFlow {stack.get('tensorflow')} ({stack.get('keras')}), Python {stack.get('python')}, "
            f"{'/'.join(stack.get('devices') or ['?'])}"
        )


def load_trace(path: str) -> Trace:
    """Reads a trace; a `TraceError` says in one line what is wrong with it and what to do."""
    try:
        kind = os.stat(path).st_mode
        if not stat.S_ISREG(kind):  # a FIFO, /dev/zero or a folder: read whole, it would never end or never start
            raise TraceError(f"{path} is not a regular file; name the trace file `lossscale-compat record -o` wrote")
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as error:
        raise TraceError(f"{path}: cannot read it ({error.strerror or error})") from None
    again = f"record it again with `lossscale-compat record -o {path} SCRIPT`"
    lines = raw.split(b"\n")
    try:
        header = json.loads(lines[0])
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TraceError(f"{path} is not a trace of `lossscale-compat record`; {again}")
    if header.get("version") != VERSION:
        raise TraceError(
            f"{path} is a version {header.get('version')} trace; this lossscale-compat reads version {VERSION}: {again}"
        )
    if raw.endswith(b"\n"):
        lines.pop()
    records: list[dict[str, Any]] = []
    digest = hashlib.sha256()
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError:
            raise TraceError(f"{path} is truncated or damaged at line {number} (not JSON); {again}") from None
        if not isinstance(record, dict):
            raise TraceError(f"{path} is damaged at line {number} (not a JSON object); {again}")
        if "end" in record:
            if number != len(lines):
                raise TraceError(f"{path} is damaged: lines follow its end line; {again}")
            if record.get("sha256") != digest.hexdigest():
                raise TraceError(f"{path} was changed after it was recorded (its SHA-256 does not match); {again}")
            return _split(path, header, records[1:], record)
        digest.update(line + b"\n")
        records.append(record)
    raise TraceError(f"{path} is truncated: it has no end line (the recording was killed before it finished); {again}")


def _split(path: str, header: dict[str, Any], records: list[dict[str, Any]], end: dict[str, Any]) -> Trace:
    optimizers = [r for r in records if "class" in r]
    steps = [r for r in records if "step" in r]
    if [o.get("optimizer") for o in optimizers] != list(range(len(optimizers))) or any(
        not isinstance(s.get("optimizer"), int) or not 0 <= s["optimizer"] < len(optimizers) for s in steps
    ):
        raise TraceError(f"{path} is damaged: its steps name optimizers it does not describe")
    wrong = _misshapen(header, optimizers, steps, end)
    if wrong:
        raise TraceError(f"{path} is damaged: {wrong}; record it again with `lossscale-compat record -o {path} SCRIPT`")
    return Trace(path, header, optimizers, steps, end)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers_each(value: Any, size: int) -> bool:
    return isinstance(value, list) and len(value) == size and all(_is_number(x) for x in value)


def _misshapen(
    header: dict[str, Any], optimizers: list[dict[str, Any]], steps: list[dict[str, Any]], end: dict[str, Any]
) -> str | None:
    """What in a trace (whose hash matched: edited by hand, or by another tool) is not of the form `record` writes."""
    for key in ("options", "stack"):
        if not isinstance(header.get(key, {}), dict):
            return f"its header's {key!r} is not a JSON object"
    if not isinstance(end.get("end"), str):
        return "its end line says no outcome"
    for o in optimizers:
        shapes, names = o.get("shapes"), o.get("variables")
        if not isinstance(o["class"], str) or not isinstance(shapes, list) or not isinstance(names, list):
            return f"optimizer {o['optimizer']} lacks its class, variables or shapes"
        if len(shapes) != len(names) or not all(isinstance(s, list) and all(_is_number(d) for d in s) for s in shapes):
            return f"optimizer {o['optimizer']}'s shapes do not match its variables"
    for s in steps:
        size = len(optimizers[s["optimizer"]]["variables"])
        if not all(isinstance(s.get(key), int) and not isinstance(s[key], bool) for key in ("step", "n", "iterations")):
            return "a step's step, n or iterations is not a whole number"
        if not (
            _is_number(s.get("scale_before"))
            and _is_number(s.get("scale_after"))
            and isinstance(s.get("skipped"), bool)
        ):
            return f"step {s['step']}'s loss scales or skipped flag are not of a number's or a flag's type"
        if not (s.get("loss") is None or _is_number(s["loss"])) or not (_numbers_each(s.get("sum"), size)):
            return f"step {s['step']}'s loss or sums are not numbers, one per variable"
        if not _numbers_each(s.get("norm"), size) or (
            "values" in s and not (isinstance(s["values"], list) and len(s["values"]) == size)
        ):
            return f"step {s['step']}'s norms or values are not one per variable"
    return None


def check_comparable(old: Trace, new: Trace, allow_incomplete: bool = False) -> None:
    """Raises `TraceError` unless the two traces record the same program's steps, whole."""
    for side, trace in (("OLD", old), ("NEW", new)):
        if not trace.steps:
            raise TraceError(
                f"{side} ({trace.path}) holds no loss-scaled step: the program built no loss-scale "
                "optimizer, or stopped before its first step; nothing to compare"
            )
        if not trace.complete and not allow_incomplete:
            raise TraceError(
                f"{side} ({trace.path}) is incomplete: the run ended '{trace.end['end']}' after "
                f"{trace.end.get('steps')} step(s) ({trace.end.get('error')}); fix the program and "
                "record it again, or pass --allow-incomplete to compare the steps it has"
            )
    for key in ("every",):
        if old.header.get("options", {}).get(key) != new.header.get("options", {}).get(key):
            raise TraceError(f"OLD and NEW were recorded with different --{key}; record both with the same options")
    if not allow_incomplete and len(old.steps) != len(new.steps):
        raise TraceError(
            f"OLD has {len(old.steps)} steps and NEW {len(new.steps)}: they are not runs of the same "
            "training (or were recorded with different --steps); record both the same way"
        )
    for a, b in zip(old.steps, new.steps):
        if a["optimizer"] != b["optimizer"] or a["n"] != b["n"]:
            raise TraceError(
                f"at step {a['step']} OLD steps its optimizer {a['optimizer']} and NEW its optimizer "
                f"{b['optimizer']}: not the same program's training; compare traces of one program"
            )
    for a, b in zip(old.optimizers, new.optimizers):
        if a["shapes"] != b["shapes"]:
            raise TraceError(
                f"OLD's optimizer {a['optimizer']} trains variables of shapes {a['shapes']}, NEW's "
                f"{b['shapes']}: not the same model; compare traces of one program"
            )


def _agree(a: float | None, b: float | None, bound: float) -> bool:
    """Whether a and b differ by at most `bound`; NaN equals NaN, inf equals inf; an unknown value agrees."""
    if a is None or b is None:
        return True
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= bound


def step_differences(old: Trace, new: Trace, index: int, rtol: float, atol: float) -> tuple[list[str], list[str]]:
    """What differs at one step, most basic first (scale, skip, iterations, loss, variables); and notes."""
    a, b = old.steps[index], new.steps[index]
    found, notes = [], []
    for key, what in (("scale_before", "loss scale before the step"), ("scale_after", "loss scale after the step")):
        if not _agree(a[key], b[key], 0.0):
            found.append(f"{what}: {a[key]:g} (old) != {b[key]:g} (new)")
    if a["skipped"] != b["skipped"]:
        found.append(f"skipped: {a['skipped']} (old) != {b['skipped']} (new)")
    if a["iterations"] != b["iterations"]:
        difference = f"iterations: {a['iterations']} (old) != {b['iterations']} (new)"
        if _keras3_count(old, new, index):
            notes.append(
                difference + ": Keras 3's own LossScaleOptimizer leaves skipped steps out of `iterations`"
                " (TF 2.4 counted them); harmless while nothing reads `iterations`, as the weights show"
            )
        else:
            found.append(difference)
    # Float16 rounding: up to (k + 1) epsilons after step k (0-based), relative and absolute.
    growth = a["step"] + 1
    loss = a.get("loss")
    if not _agree(loss, b.get("loss"), growth * (atol + rtol * abs(loss or 0.0))):
        found.append(f"loss: {loss!r} (old) != {b['loss']!r} (new)")
    found += _variable_differences(old.optimizers[a["optimizer"]], a, b, growth * rtol, growth * atol)
    return found, notes


def _variable_differences(
    optimizer: dict[str, Any], a: dict[str, Any], b: dict[str, Any], rtol: float, atol: float
) -> list[str]:
    found = []
    for i, name in enumerate(optimizer["variables"]):
        # Elements round independently, so their differences add in quadrature: the sum's and the L2 norm's
        # differences are both bounded by the tolerance relative to the L2 norm.
        norm = max(abs(a["norm"][i]), abs(b["norm"][i]))
        if not _agree(a["sum"][i], b["sum"][i], atol + rtol * norm):
            found.append(f"variable {name}: sum {a['sum'][i]!r} (old) != {b['sum'][i]!r} (new)")
        elif not _agree(a["norm"][i], b["norm"][i], atol + rtol * norm):
            found.append(f"variable {name}: L2 norm {a['norm'][i]!r} (old) != {b['norm'][i]!r} (new)")
        elif "values" in a and "values" in b:
            pairs = list(zip(_flatten(a["values"][i]), _flatten(b["values"][i])))
            if not all(_agree(x, y, atol + rtol * abs(x)) for x, y in pairs):
                found.append(f"variable {name}: its values differ beyond the tolerance (--full)")
    return found


def _flatten(value: Any) -> list[float]:
    return [x for item in value for x in _flatten(item)] if isinstance(value, list) else [value]


def _keras3_count(old: Trace, new: Trace, index: int) -> bool:
    """Whether one side is Keras 3's own class and its `iterations` is the other's minus the skips so far."""
    a, b = old.steps[index], new.steps[index]
    skips = sum(s["skipped"] for s in old.steps[: index + 1] if s["optimizer"] == a["optimizer"])
    classes = (old.optimizers[a["optimizer"]]["class"], new.optimizers[b["optimizer"]]["class"])
    if classes[1] == KERAS3_OWN_CLASS and classes[0] != KERAS3_OWN_CLASS:
        return b["iterations"] == a["iterations"] - skips
    if classes[0] == KERAS3_OWN_CLASS and classes[1] != KERAS3_OWN_CLASS:
        return a["iterations"] == b["iterations"] - skips
    return False


class Comparison:
    """The outcome: the first differing step (or None), what differs there, and notes on harmless differences."""

    def __init__(self, old: Trace, new: Trace, rtol: float, atol: float, strict_iterations: bool = False) -> None:
        self.old, self.new = old, new
        self.first: int | None = None
        self.differences: list[str] = []
        self.notes: list[str] = []
        for index in range(min(len(old.steps), len(new.steps))):
            found, notes = step_differences(old, new, index, rtol, atol)
            if strict_iterations:
                found, notes = found + notes, []
            if notes and not self.notes:
                self.notes = [f"step {index}: {note}" for note in notes]
            if found:
                self.first, self.differences = index, found
                break

    @property
    def same(self) -> bool:
        return self.first is None

    def verdict(self) -> str:
        old, new = self.old, self.new
        count = min(len(old.steps), len(new.steps))
        if self.first is None:
            iterations = "; `iterations` only as noted above" if self.notes else " and iterations"
            return (
                f"the runs agree: {count} steps, the same loss scales, skipped steps{iterations}, losses and "
                "weights within float16 rounding"
            )
        first = self.first
        step = old.steps[first]
        where = f"step {first} (optimizer {step['optimizer']}'s step {step['n']}"
        found = f"the runs part at {where}, {old.optimizers[step['optimizer']]['class'].rsplit('.', 1)[-1]}):\n  "
        found += "\n  ".join(self.differences)
        if self.notes:
            found += (
                "\n`iterations` parted first (noted above), and something reads it (a learning-rate schedule, "
                "Adam's bias correction): keep TF 2.4's count with lossscale_compat.KerasLossScaleOptimizer"
            )
        return found

    def as_json(self) -> dict[str, Any]:
        return {
            "same": self.same,
            "first_difference": None
            if self.first is None
            else {
                "step": self.first,
                "optimizer": self.old.steps[self.first]["optimizer"],
                "n": self.old.steps[self.first]["n"],
                "differences": self.differences,
            },
            "notes": self.notes,
            "steps": len(self.old.steps),
            "old": {"path": self.old.path, "stack": self.old.header.get("stack")},
            "new": {"path": self.new.path, "stack": self.new.header.get("stack")},
        }


def assert_same_training(
    old: Any,
    new: Any,
    *,
    rtol: float = FLOAT16_EPSILON,
    atol: float = FLOAT32_ATOL,
    strict_iterations: bool = False,
    allow_incomplete: bool = False,
) -> None:
    """Fails with the first differing step and what differs there unless two recorded runs agree.

    Each side is a trace file's path (from `lossscale-compat record` or `testing.record_training`). A file that is
    not a whole trace, or two traces of different programs, raise `ValueError` (`TraceError`), as `compare` exits 2.
    """
    old_trace, new_trace = load_trace(os.fspath(old)), load_trace(os.fspath(new))
    check_comparable(old_trace, new_trace, allow_incomplete)
    comparison = Comparison(old_trace, new_trace, rtol, atol, strict_iterations)
    if not comparison.same:
        raise AssertionError("\n".join([*comparison.notes, comparison.verdict()]))


def table(comparison: Comparison) -> str:
    """The two runs side by side, one line per step, the first differing step marked."""
    old, new = comparison.old, comparison.new
    lines = [
        f"OLD: {old.path}: {old.describe()}",
        f"NEW: {new.path}: {new.describe()}",
        "",
        (
            f"{'step':>4} {'opt':>3} {'n':>4} {'scale old':>10} {'scale new':>10} {'skip':>9} "
            f"{'iterations':>11} {'loss old':>12} {'loss new':>12}"
        ),
    ]
    for index, (a, b) in enumerate(zip(old.steps, new.steps)):
        skip = f"{'*' if a['skipped'] else '-'}/{'*' if b['skipped'] else '-'}"
        mark = "  <-- first difference" if index == comparison.first else ""
        lines.append(
            f"{index:>4} {a['optimizer']:>3} {a['n']:>4} {a['scale_after']:>10g} {b['scale_after']:>10g} "
            f"{skip:>9} {a['iterations']:>5}/{b['iterations']:<5} {_number(a.get('loss')):>12} "
            f"{_number(b.get('loss')):>12}{mark}"
        )
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def plot(comparison: Comparison, path: str) -> None:
    """Writes both runs' loss scale after each step, skipped steps marked, one panel per optimizer, as a PNG."""
    from lossscale_compat._plot import plot_loss_scales

    runs = {}
    for name, trace in (
        ("OLD: " + comparison.old.describe(), comparison.old),
        ("NEW: " + comparison.new.describe(), comparison.new),
    ):
        runs[name] = {
            f"optimizer {o['optimizer']} ({o['class'].rsplit('.', 1)[-1]})": (
                [s["scale_after"] for s in trace.steps if s["optimizer"] == o["optimizer"]],
                [s["n"] for s in trace.steps if s["optimizer"] == o["optimizer"] and s["skipped"]],
            )
            for o in trace.optimizers
        }
    title = "the runs agree" if comparison.same else f"the runs part at step {comparison.first}"
    plot_loss_scales(runs, path, title)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lossscale-compat compare",
        usage=USAGE,
        description="Compares two traces of `lossscale-compat record` step by step.",
    )
    parser.add_argument("old", metavar="OLD", help="the trace recorded on the old stack (TF 2.4)")
    parser.add_argument("new", metavar="NEW", help="the trace recorded on the new stack")
    parser.add_argument(
        "--rtol",
        type=float,
        default=FLOAT16_EPSILON,
        help="relative tolerance per step for losses and weights (default 2**-10, float16's epsilon)",
    )
    parser.add_argument(
        "--atol",
        type=float,
        default=FLOAT32_ATOL,
        help="absolute tolerance per step for losses and weights (default 1e-6)",
    )
    parser.add_argument(
        "--strict-iterations",
        action="store_true",
        help="fail on Keras 3's `iterations` count too (it leaves skipped steps out)",
    )
    parser.add_argument(
        "--allow-incomplete", action="store_true", help="compare the steps two runs have in common, even if one crashed"
    )
    parser.add_argument("--plot", metavar="FILE.png", help="draw both loss-scale trajectories, skips marked")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="the report's form")
    return parser


def main(argv: Sequence[str]) -> int:
    """`lossscale-compat compare OLD NEW`: 0 when the runs agree, 1 when they part, 2 on bad input."""
    try:
        options = _parser().parse_args(list(argv))
    except SystemExit as stop:
        return EXIT_BAD_INPUT if stop.code else EXIT_SAME
    if options.rtol < 0 or options.atol < 0 or math.isnan(options.rtol) or math.isnan(options.atol):
        return _bad("--rtol and --atol take a number of at least 0")
    if options.plot and not _can_plot(options.plot):
        return _bad(f"--plot {options.plot}: cannot write there, or matplotlib is missing (pip install matplotlib)")
    try:
        old, new = load_trace(options.old), load_trace(options.new)
        check_comparable(old, new, options.allow_incomplete)
    except TraceError as error:
        return _bad(str(error))
    comparison = Comparison(old, new, options.rtol, options.atol, options.strict_iterations)
    if options.format == "json":
        print(json.dumps(comparison.as_json(), indent=1, sort_keys=True))
    else:
        print(table(comparison))
        print("", *comparison.notes, comparison.verdict(), sep="\n")
    if options.plot:
        plot(comparison, options.plot)
        if options.format == "text":
            print(f"plot of the loss-scale trajectories: {os.path.abspath(options.plot)}")
    return EXIT_SAME if comparison.same else EXIT_DIFFERENT


def _bad(message: str) -> int:
    print(f"lossscale-compat compare: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _can_plot(path: str) -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    folder = os.path.dirname(os.path.abspath(path))
    return os.path.isdir(folder) and os.access(folder, os.W_OK) and not os.path.isdir(path)
