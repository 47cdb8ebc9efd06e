"""The supported TensorFlow/Keras stacks: one table, read by the test matrix, the docs and the range check.

Pure data and the standard library: `noxfile.py` loads this file without installing the package.
To support a new release, edit `TENSORFLOW` only; every stack, the tested range and the support table follow.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

# TensorFlow minor -> (the oldest Keras its wheel accepts, the newest Keras it accepts), from each
# `tensorflow-cpu` wheel's `Requires-Dist: keras` line, and whether it has a tf_keras (TF_USE_LEGACY_KERAS=1).
# The newest Keras is the newest release on PyPI that pip resolves next to that TensorFlow.
TENSORFLOW: dict[str, tuple[str, str, bool]] = {
    "2.15": ("2.15.0", "2.15.0", False),  # keras>=2.15.0,<2.16: Keras 2, built in
    "2.16": ("3.0.0", "3.15.1", True),  # keras>=3.0.0
    "2.17": ("3.2.0", "3.15.1", True),  # keras>=3.2.0
    "2.18": ("3.5.0", "3.15.1", True),  # keras>=3.5.0
    "2.19": ("3.5.0", "3.15.1", True),  # keras>=3.5.0
    "2.20": ("3.10.0", "3.15.1", True),  # keras>=3.10.0
    "2.21": ("3.12.0", "3.15.1", True),  # keras>=3.12.0
}

# The stacks that run the whole suite; every other stack runs `CORE_TESTS`.
FULL_SUITE = ("tf221-keras3", "tf221-tfkeras", "tf215-keras2")

# What every other stack runs, on two pytest workers: the TF 2.4 example programs and the programs modelled on public
# training code (legacy mode and migrated), the optimizer, checkpoint (cross-class restores too) and equivalence tests,
# the monitor, the run-time fallbacks migrated code calls, and the mirror of TF 2.4.0's own tests (tests/conformance).
# Left to the full-suite stacks: the multi-worker run over loopback and the pytest plugin's own tests, which exercise
# no Keras difference.
CORE_TESTS = (
    "tests/optimizer/test_behaviour_equivalence.py",
    "tests/optimizer/test_codemod_promise.py",
    "tests/optimizer/test_configs.py",
    "tests/optimizer/test_cross_restore.py",
    "tests/optimizer/test_equivalence.py",
    "tests/optimizer/test_equivalent_cli.py",
    "tests/optimizer/test_errors.py",
    "tests/optimizer/test_modern_equivalent.py",
    "tests/optimizer/test_normal_api_restore.py",
    "tests/optimizer/test_one_translation.py",
    "tests/optimizer/test_raw_apply.py",
    "tests/optimizer/test_state.py",
    "tests/optimizer/test_tf24_lso_test_items.py",
    "tests/optimizer/test_training.py",
    "tests/loss_scale/test_checkpoint.py",
    "tests/conformance",
    "tests/legacy/test_run_programs.py",
    "tests/migrate/test_migrated_examples.py",
    "tests/migrate/test_real_programs.py",
    "tests/monitor",
    "tests/test_runtime_fallbacks.py",
    "tests/test_stacks.py",
)


# Stacks that `nox` with no arguments (the README's test command, and CI) leaves out until a run of them has been seen
# to pass; each still runs with `nox -s "tests(stack='NAME')"`. Empty it as the support table fills.
NOT_YET_IN_CI: frozenset[str] = frozenset()


class UntestedStackWarning(UserWarning):
    """TensorFlow or Keras is outside the range lossscale_compat was tested with."""


@dataclass(frozen=True)
class Stack:
    """One TensorFlow release with one Keras: what a nox `tests` session installs and runs."""

    name: str
    tensorflow: str
    keras: str  # the exact Keras release; for `tf_keras`, the tf-keras release series
    tf_keras: bool
    gpu_build: bool = False  # `tensorflow` (its GPU kernels registered) rather than `tensorflow-cpu`

    @property
    def requirements(self) -> list[str]:
        """The pip requirements that install this stack."""
        tensorflow = f"{'tensorflow' if self.gpu_build else 'tensorflow-cpu'}=={self.tensorflow}.*"
        if self.tf_keras:
            return [tensorflow, f"tf-keras=={self.tensorflow}.*"]
        return [tensorflow, f"keras=={self.keras}"]

    @property
    def environment(self) -> dict[str, str]:
        """Environment variables this stack runs with."""
        return {"TF_USE_LEGACY_KERAS": "1"} if self.tf_keras else {}

    @property
    def keras_2(self) -> bool:
        """Whether this stack's `tf.keras` is the Keras 2 API (tf_keras, or TF 2.15's built-in Keras)."""
        return self.tf_keras or self.keras.startswith("2.")

    @property
    def full_suite(self) -> bool:
        """Whether this stack runs the whole suite rather than `CORE_TESTS`."""
        return self.name in FULL_SUITE

    @property
    def keras_label(self) -> str:
        """The Keras as a reader names it: 'Keras 3.5.0', 'tf_keras 2.16', 'Keras 2.15.0 (built in)'."""
        if self.tf_keras:
            return f"tf_keras {self.tensorflow}"
        return f"Keras {self.keras}" + (" (built in)" if self.keras.startswith("2.") else "")


def _short(version: str) -> str:
    return version.replace(".", "")


def _stacks_of(tensorflow: str, oldest: str, newest: str, tf_keras: bool) -> list[Stack]:
    tf_name = f"tf{_short(tensorflow)}"
    if oldest.startswith("2."):
        return [Stack(f"{tf_name}-keras2", tensorflow, oldest, False)]
    # The newest Keras of the newest TensorFlow is the default user's stack: `tf221-keras3`.
    newest_name = "keras3" if tensorflow == max(TENSORFLOW, key=_release) else f"keras{_minor(newest)}"
    stacks = [Stack(f"{tf_name}-keras{_minor(oldest)}", tensorflow, oldest, False)]
    if newest != oldest:
        stacks.append(Stack(f"{tf_name}-{newest_name}", tensorflow, newest, False))
    if tf_keras:
        stacks.append(Stack(f"{tf_name}-tfkeras", tensorflow, tensorflow, True))
    return stacks


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _release(version: str) -> tuple[int, ...]:
    """'3.15.1' -> (3, 15, 1); a pre-release or local part is ignored ('2.16.0rc0' -> (2, 16, 0))."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


STACKS: tuple[Stack, ...] = tuple(stack for minor, pins in TENSORFLOW.items() for stack in _stacks_of(minor, *pins))

# The GPU build of TensorFlow, which most Linux users install: it registers its GPU kernels on a machine without a GPU,
# so tests/gpu audits every op of each public train step against them. It runs `GPU_BUILD_TESTS`, and appears in the
# support table once a run of it is recorded.
GPU_BUILD_STACKS: tuple[Stack, ...] = (Stack("tf221-keras3-gpu", "2.21", "3.15.1", False, gpu_build=True),)
GPU_BUILD_TESTS = (
    "tests/gpu",
    "tests/optimizer/test_training.py",
    "tests/optimizer/test_tf24_lso_test_items.py",
    "tests/loss_scale/test_checkpoint.py",
    "tests/test_stacks.py",
)
STACKS_BY_NAME: dict[str, Stack] = {stack.name: stack for stack in (*STACKS, *GPU_BUILD_STACKS)}


def tested_range(keras_2: bool) -> dict[str, tuple[str, str]]:
    """{'tensorflow': (oldest, newest), 'keras': (oldest, newest)} over the stacks of one Keras API."""
    stacks = [stack for stack in STACKS if stack.keras_2 == keras_2]
    tensorflows = sorted((stack.tensorflow for stack in stacks), key=_release)
    kerases = sorted((stack.keras for stack in stacks), key=_release)
    return {"tensorflow": (tensorflows[0], tensorflows[-1]), "keras": (kerases[0], kerases[-1])}


def untested_reason(tensorflow: str, keras: str) -> str | None:
    """Why this TensorFlow/Keras pair is outside the tested range (compared by minor release), or None."""
    keras_2 = keras.startswith("2.")
    ranges = tested_range(keras_2)
    outside = [
        f"{label} {version}"
        for label, version, (oldest, newest) in (
            ("TensorFlow", tensorflow, ranges["tensorflow"]),
            ("Keras", keras, ranges["keras"]),
        )
        if not _release(oldest)[:2] <= _release(version)[:2] <= _release(newest)[:2]
    ]
    if not outside:
        return None
    newest = max((stack for stack in STACKS if stack.keras_2 == keras_2), key=_order)
    (tf_oldest, tf_newest), (keras_oldest, keras_newest) = ranges["tensorflow"], ranges["keras"]
    flavour = "tf_keras/Keras" if keras_2 else "Keras"
    return (
        f"lossscale_compat was tested with TensorFlow {tf_oldest}-{tf_newest} and {flavour} {_minor(keras_oldest)}-"
        f"{_minor(keras_newest)}, not with {' and '.join(outside)}. It should still work. If something fails, "
        f"install a tested pair, such as `pip install {' '.join(repr(r) for r in newest.requirements)}` (all of them "
        "are in docs/support.md), and report the failure."
    )


def _order(stack: Stack) -> tuple:
    return _release(stack.tensorflow), _release(stack.keras)


_warned = False


def warn_if_untested(tensorflow: str, keras: str) -> None:
    """Warns once per process when TensorFlow or Keras is outside the tested range; never stops the program."""
    global _warned
    reason = untested_reason(tensorflow, keras)
    if reason is None or _warned:
        return
    _warned = True
    warnings.warn(reason, UntestedStackWarning, stacklevel=3)


# --- The support table in README.md and docs/support.md, from a run of the matrix -------------------------------

TABLE_START, TABLE_END = "<!-- support-table: start -->", "<!-- support-table: end -->"


def support_table(results: dict[str, dict]) -> str:
    """The Markdown support table: every stack, the versions its run installed, what ran and the counts.

    `results` maps a stack name to what `nox -s tests` recorded for it (build/matrix/STACK.json).
    """
    rows = [
        "| stack | TensorFlow | Keras | what ran | result | commit |",
        "|---|---|---|---|---|---|",
    ]
    for stack in (*STACKS, *(stack for stack in GPU_BUILD_STACKS if stack.name in results)):
        record = results.get(stack.name)
        if record is None:
            rows.append(f"| `{stack.name}` | {stack.tensorflow} | {stack.keras_label} | not run | | |")
            continue
        versions = record["versions"]
        keras = f"tf_keras {versions['tf-keras']}" if stack.tf_keras else f"Keras {versions['keras']}"
        tensorflow = versions.get("tensorflow-cpu", versions.get("tensorflow"))
        result = ", ".join(f"{record[outcome]} {outcome}" for outcome in ("passed", "failed", "skipped", "xfailed"))
        commit = record.get("commit", "")
        rows.append(f"| `{stack.name}` | {tensorflow} | {keras} | {record['ran']} | {result} | {commit} |")
    return "\n".join(rows) + "\n"


def with_support_table(text: str, table: str) -> str:
    """`text` with the part between the support-table markers replaced by `table`."""
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    return f"{text[:start]}\n{table}{text[end:]}"
