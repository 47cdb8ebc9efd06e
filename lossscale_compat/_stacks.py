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
TENSORFLOW: dict[str, tuple[str, str, bool] | tuple[str, str, bool, str]] = {
    "2.15": ("2.15.0", "2.15.0", False),  # keras>=2.15.0,<2.16: Keras 2, built in
    "2.16": ("3.0.0", "3.15.1", True),  # keras>=3.0.0
    "2.17": ("3.2.0", "3.15.1", True),  # keras>=3.2.0
    "2.18": ("3.5.0", "3.15.1", True),  # keras>=3.5.0
    "2.19": ("3.5.0", "3.15.1", True),  # keras>=3.5.0
    "2.20": ("3.10.0", "3.15.1", True),  # keras>=3.10.0
    "2.21": ("3.12.0", "3.15.1", True),  # keras>=3.12.0
    # A release candidate: a 4th item pins it, with the Keras its wheel resolves to pinned exactly (keras-nightly>=
    # 3.12.0.dev0; the newest nightly on 2026-11-26). Its stack is a pre-release in the support table and outside the
    # tested range. When TF 2.22 is final, this line becomes `"2.22": (OLDEST, NEWEST, TF_KERAS),`.
    "2.22": ("3.16.0.dev2026102704", "3.16.0.dev2026102704", False, "2.22.0rc0"),
}

# The Keras that was current on the day each TensorFlow minor was released, which users who upgraded then pinned:
# the newest Keras uploaded before that minor's first final tensorflow-cpu upload. Source: PyPI's JSON API
# (`releases`, each file's `upload_time_iso_8601`), read 2026-11-26; docs/support.md has the table.
# TensorFlow minor: (Keras, first final TensorFlow release, its upload date, that Keras's upload date)
RELEASE_DAY_KERAS: dict[str, tuple[str, str, str, str]] = {
    "2.15": ("2.15.0", "2.15.0", "2023-11-14", "2023-11-14"),  # built in (TF 2.15 requires keras<2.16)
    "2.16": ("3.0.5", "2.16.1", "2024-03-09", "2024-02-14"),  # 2.16.0 was never uploaded
    "2.17": ("3.4.1", "2.17.0", "2024-07-11", "2024-06-26"),
    "2.18": ("3.6.0", "2.18.0", "2024-10-25", "2024-10-03"),
    "2.19": ("3.9.0", "2.19.0", "2025-03-12", "2025-03-04"),
    "2.20": ("3.11.2", "2.20.0", "2025-08-13", "2025-08-11"),
    "2.21": ("3.13.2", "2.21.0", "2026-03-06", "2026-01-30"),
}

# Keras 3 minors no other stack tests, each pinned to its newest patch on the TensorFlow that was current when it
# came out, so that every Keras 3 minor from 3.0 on runs somewhere. Keras: TensorFlow minor.
OTHER_PINNED_KERAS: dict[str, str] = {
    "3.1.1": "2.16",
    "3.3.3": "2.16",  # with TF 2.16.2, the pair issue #34 was reported on
    "3.7.0": "2.18",
    "3.8.0": "2.18",
    "3.14.1": "2.21",
}

# The stacks that run the whole suite; every other stack runs `CORE_TESTS`.
FULL_SUITE = ("tf221-keras3", "tf221-tfkeras", "tf215-keras2")

# What every other stack runs, on two pytest workers: the TF 2.4 example programs and the programs modelled on public
# training code (legacy mode and migrated), TF 2.4's private layer attributes in legacy mode (which Keras 3.0-3.2 and
# later Keras 3 answer differently), the optimizer, checkpoint (cross-class restores too) and equivalence tests,
# the monitor, the run-time fallbacks migrated code calls, the mirror of TF 2.4.0's own tests (tests/conformance), and
# `record`/`compare` (tests/trace: the hooks on this stack's classes, and the project compared with TF 2.4.0's run).
# Left to the full-suite stacks: the multi-worker run over loopback and the pytest plugin's own tests, which exercise
# no Keras difference.
CORE_TESTS = (
    "tests/optimizer/test_behaviour_equivalence.py",
    "tests/optimizer/test_codemod_promise.py",
    "tests/optimizer/test_configs.py",
    "tests/optimizer/test_cross_restore.py",
    "tests/optimizer/test_deferred_resume.py",
    "tests/optimizer/test_equivalence.py",
    "tests/optimizer/test_equivalent_cli.py",
    "tests/optimizer/test_errors.py",
    "tests/optimizer/test_modern_equivalent.py",
    "tests/optimizer/test_normal_api_restore.py",
    "tests/optimizer/test_one_translation.py",
    "tests/optimizer/test_raw_apply.py",
    "tests/optimizer/test_scheduled_rate.py",
    "tests/optimizer/test_state.py",
    "tests/optimizer/test_stepped_restore.py",
    "tests/optimizer/test_tf24_lso_test_items.py",
    "tests/optimizer/test_training.py",
    "tests/loss_scale/test_checkpoint.py",
    "tests/conformance",
    "tests/legacy/test_hyperparameters.py",
    "tests/legacy/test_keras3_layer_attributes.py",
    "tests/legacy/test_run_programs.py",
    "tests/migrate/test_migrated_examples.py",
    "tests/migrate/test_real_programs.py",
    "tests/monitor",
    "tests/test_runtime_fallbacks.py",
    "tests/test_stacks.py",
    # tests/trace but test_skips.py (the whole-suite stacks and record-tf24 run it: `skipped` reads no Keras difference)
    "tests/trace/test_compare.py",
    "tests/trace/test_project_proof.py",
    "tests/trace/test_record.py",
    "tests/trace/test_testing_api.py",
)


# What the pinned-Keras stacks (release-day and other pinned Keras) run: the hyperparameter reads, the TF 2.4 example
# programs in legacy mode and migrated, and the stack checks. Each costs well under a core-tests stack, which keeps
# `.ci/run` within its time (docs/support.md).
PINNED_TESTS = (
    "tests/legacy/test_hyperparameters.py",
    "tests/optimizer/test_scheduled_rate.py",
    "tests/legacy/test_run_programs.py",
    "tests/migrate/test_migrated_examples.py",
    "tests/test_stacks.py",
)


# What the GPU-build stack runs: the GPU audit and a few core tests (its Python side is tensorflow-cpu's).
GPU_BUILD_TESTS = (
    "tests/gpu",
    "tests/optimizer/test_training.py",
    "tests/optimizer/test_tf24_lso_test_items.py",
    "tests/loss_scale/test_checkpoint.py",
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
    prerelease: str = ""  # the exact TensorFlow pre-release ("2.22.0rc0"), or "" for the minor's newest release
    pinned: bool = False  # a pinned-Keras stack, which runs `PINNED_TESTS`

    @property
    def requirements(self) -> list[str]:
        """The pip requirements that install this stack."""
        distribution = "tensorflow" if self.gpu_build else "tensorflow-cpu"
        tensorflow = f"{distribution}=={self.prerelease or self.tensorflow + '.*'}"
        if self.tf_keras:
            return [tensorflow, f"tf-keras=={self.tensorflow}.*"]
        return [tensorflow, f"{self.keras_package}=={self.keras}"]

    @property
    def keras_package(self) -> str:
        """The distribution the Keras comes in: `keras`, or `keras-nightly` for a nightly (`3.16.0.devN`)."""
        return "keras-nightly" if ".dev" in self.keras else "keras"

    @property
    def tests(self) -> tuple[str, ...]:
        """What this stack runs: () for the whole suite, else `CORE_TESTS`, `PINNED_TESTS` or `GPU_BUILD_TESTS`."""
        if self.full_suite:
            return ()
        if self.gpu_build:
            return GPU_BUILD_TESTS
        return PINNED_TESTS if self.pinned else CORE_TESTS

    @property
    def ran(self) -> str:
        """What this stack runs, as the support table names it."""
        if self.gpu_build:
            return "core tests (the GPU build: tests/gpu and a few core tests)"
        return "whole suite" if self.full_suite else ("pinned tests" if self.pinned else "core tests")

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
        suffix = " (built in)" if self.keras.startswith("2.") else " (nightly)" if ".dev" in self.keras else ""
        return f"Keras {self.keras}{suffix}"


def _short(version: str) -> str:
    return version.replace(".", "")


def _stacks_of(tensorflow: str, oldest: str, newest: str, tf_keras: bool, prerelease: str = "") -> list[Stack]:
    tf_name = f"tf{_short(tensorflow)}"
    if prerelease:
        name = f"{tf_name}{re.sub(r'^[0-9.]+', '', prerelease)}-keras{_minor(newest)}"  # tf222rc0-keras3.16
        return [Stack(name, tensorflow, newest, False, prerelease=prerelease)]
    if oldest.startswith("2."):
        return [Stack(f"{tf_name}-keras2", tensorflow, oldest, False)]
    # The newest Keras of the newest final TensorFlow is the default user's stack: `tf221-keras3`.
    finals = [minor for minor, pins in TENSORFLOW.items() if len(pins) == 3]
    newest_name = "keras3" if tensorflow == max(finals, key=_release) else f"keras{_minor(newest)}"
    stacks = [Stack(f"{tf_name}-keras{_minor(oldest)}", tensorflow, oldest, False)]
    if newest != oldest:
        stacks.append(Stack(f"{tf_name}-{newest_name}", tensorflow, newest, False))
    if tf_keras:
        stacks.append(Stack(f"{tf_name}-tfkeras", tensorflow, tensorflow, True))
    return stacks


def _pinned_stacks() -> list[Stack]:
    """The release-day Keras of each TensorFlow minor and the other pinned Keras, where no stack has them yet."""
    pins = [(tensorflow, keras) for tensorflow, (keras, *_) in RELEASE_DAY_KERAS.items()]
    pins += [(tensorflow, keras) for keras, tensorflow in OTHER_PINNED_KERAS.items()]
    return [
        Stack(f"tf{_short(tensorflow)}-keras{keras}", tensorflow, keras, False, pinned=True)
        for tensorflow, keras in pins
        if keras not in TENSORFLOW[tensorflow][:2]
    ]


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _release(version: str) -> tuple[int, ...]:
    """'3.15.1' -> (3, 15, 1); a pre-release or local part is ignored ('2.16.0rc0' -> (2, 16, 0))."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


STACKS: tuple[Stack, ...] = tuple(
    [stack for minor, pins in TENSORFLOW.items() for stack in _stacks_of(minor, *pins)] + _pinned_stacks()
)
STACKS_BY_NAME: dict[str, Stack] = {stack.name: stack for stack in STACKS}
PRERELEASE_STACKS: tuple[Stack, ...] = tuple(stack for stack in STACKS if stack.prerelease)

# The GPU build of TensorFlow, which most Linux users install: it registers its GPU kernels on a machine without a GPU,
# so tests/gpu audits every op of each public train step against them. It runs `GPU_BUILD_TESTS`, and appears in the
# support table once a run of it is recorded.
GPU_BUILD_STACKS: tuple[Stack, ...] = (Stack("tf221-keras3-gpu", "2.21", "3.15.1", False, gpu_build=True),)
STACKS_BY_NAME.update({stack.name: stack for stack in GPU_BUILD_STACKS})


def tested_range(keras_2: bool) -> dict[str, tuple[str, str]]:
    """{'tensorflow': (oldest, newest), 'keras': (oldest, newest)} over the final stacks of one Keras API."""
    stacks = [stack for stack in STACKS if stack.keras_2 == keras_2 and not stack.prerelease]
    tensorflows = sorted((stack.tensorflow for stack in stacks), key=_release)
    kerases = sorted((stack.keras for stack in stacks), key=_release)
    return {"tensorflow": (tensorflows[0], tensorflows[-1]), "keras": (kerases[0], kerases[-1])}


def untested_reason(tensorflow: str, keras: str) -> str | None:
    """Why this TensorFlow/Keras pair is outside the tested range (compared by minor release), or None."""
    keras_2 = keras.startswith("2.")
    # TensorFlow's own `__version__` spells a candidate "2.22.0-rc0", its wheel "2.22.0rc0".
    if any((stack.prerelease, stack.keras) == (tensorflow.replace("-", ""), keras) for stack in PRERELEASE_STACKS):
        return None
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
    newest = max((stack for stack in STACKS if stack.keras_2 == keras_2 and not stack.prerelease), key=_order)
    (tf_oldest, tf_newest), (keras_oldest, keras_newest) = ranges["tensorflow"], ranges["keras"]
    flavour = "tf_keras/Keras" if keras_2 else "Keras"
    return (
        f"lossscale_compat was tested with TensorFlow {tf_oldest}-{tf_newest} and {flavour} {_minor(keras_oldest)}-"
        f"{_minor(keras_newest)}, not with {' and '.join(outside)}. It should still work. If something fails, "
        f"install a tested pair, such as `pip install {' '.join(repr(r) for r in newest.requirements)}` (all of them "
        f"are in docs/support.md), and report the failure.{_newest_prerelease_note()}"
    )


def _newest_prerelease_note() -> str:
    if not PRERELEASE_STACKS:
        return ""
    newest = max(PRERELEASE_STACKS, key=_order)
    return (
        f" The newest pre-release tested is TensorFlow {newest.prerelease} with {newest.keras_package} {newest.keras} "
        f"(`pip install {' '.join(repr(r) for r in newest.requirements)}`)."
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


# --- The support table in docs/support.md, from a run of the matrix ----------------------------------------------

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
            tensorflow = f"{stack.prerelease} (pre-release)" if stack.prerelease else stack.tensorflow
            rows.append(f"| `{stack.name}` | {tensorflow} | {stack.keras_label} | not run | | |")
            continue
        versions = record["versions"]
        keras = f"tf_keras {versions['tf-keras']}" if stack.tf_keras else f"Keras {versions[stack.keras_package]}"
        keras += " (nightly)" if stack.keras_package == "keras-nightly" else ""
        tensorflow = versions.get("tensorflow-cpu", versions.get("tensorflow"))
        tensorflow += " (pre-release)" if stack.prerelease else ""
        result = ", ".join(f"{record[outcome]} {outcome}" for outcome in ("passed", "failed", "skipped", "xfailed"))
        commit = record.get("commit", "")
        rows.append(f"| `{stack.name}` | {tensorflow} | {keras} | {record['ran']} | {result} | {commit} |")
    return "\n".join(rows) + "\n"


def with_support_table(text: str, table: str) -> str:
    """`text` with the part between the support-table markers replaced by `table`."""
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    return f"{text[:start]}\n{table}{text[end:]}"
