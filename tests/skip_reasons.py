"""Every reason a test of this suite may be skipped for, by kind (issue 47), and the pytest hooks (this module is a
plugin, named in tests/conftest.py) that fail a test or module skipped for any other reason.

A reason is listed by its start; `{}` stands for a part that varies (a version, an error's text). The list comes
from a whole-suite run on tf221-keras3 (`-rs`) and from every `skip`/`skipif`/`importorskip` in tests/, each read
and classified. To add a skip, add its reason here under the kind it is, or do not skip.
"""

from __future__ import annotations

import re

import pytest

# The stack lacks what the test exercises (its Keras or TensorFlow has no such feature, or has the behaviour the test
# is about only elsewhere); a stack that has it runs the test.
STACK = "another stack runs it"
# Documented as out of reach on this stack (docs/support.md, docs/tf24_conformance.md), with the way out.
OUT_OF_REACH = "documented out of reach here"
# The machine or the session lacks a tool: root, FIFOs, /proc, TensorFlow or Keras (the codemod-only sessions), the
# `build` package, the console script, a libcst new enough for the newest syntax.
ENVIRONMENT = "the environment lacks a tool"

REASONS = {
    STACK: (
        "this TensorFlow no longer ships tf.compat.v1.mixed_precision",
        "Keras 3 reads TF 2.4.0's checkpoints through restore_tf24_checkpoint",
        "on tf_keras every fixed scale is rewritten",
        "Keras 3 expresses a fixed scale as the optimizer's loss_scale_factor",
        "loss_scale_factor is Keras 3's",
        "`loss_scale_factor` is Keras 3's fixed scale",
        "Keras 3's scale_loss/apply-unscales contract exists only on Keras 3",
        "the tf_keras target's output runs where `tf.keras` is Keras 2",
        "Keras 2 still writes a model's variables under TF 2.4's names",
        "Keras 3's own LossScaleOptimizer has Keras 3's variable layout only there",
        "Keras 2's own LossScaleOptimizer saves no loss-scale state only on Keras 2",
        "this Keras's Model has no `get_state_tree`",
        "Keras 2's H5 loader takes `compile` itself",
        "compared with Keras 3's own LossScaleOptimizer, only Keras 3 has",
        "Keras 3 has no legacy optimizers",
        "Keras 3 has no legacy (OptimizerV2) optimizers",
        "Keras 3 has no OptimizerV2",
        "this Keras cannot save its own LossScaleOptimizer in an .h5 file: {}",
        "this stack's optimizer base class has no `learning_rate` property",
        "this stack's inner optimizer has no gradient_aggregator: {}",
        "Keras 2's LossScaleOptimizer is TF 2.4's",
        "Keras 2's LossScaleOptimizer has TF 2.4's floor of 1",
        "this stack's LossScaleOptimizer has a dynamic scale only",
        "Keras 2's LossScaleOptimizer grows the scale only if the result is finite",
        "Keras 2's own class, which ours is there, does not warn about a NaN scale",
        "Keras 2's optimizers have no `scale_loss`",
        "this Keras's optimizers are TensorFlow trackables",
        "on Keras 2 such a subclass is TF 2.4's OptimizerV2",
        "on Keras 2 legacy mode gives OptimizerV2",
        "Keras 3 saves no optimizer in a SavedModel",
        "on tf_keras, tf_keras's LossScaleOptimizer keeps TF 2.4's methods",
        "the untraced-receiver rewrite is for Keras 3 only",
        "the unique optimizer names are Keras 3's",
        "a tf_keras stack: --target keras3 runs on this TensorFlow's Keras 3 stacks",
        "--target {} runs only where tf.keras is {}; this stack is not",
        "on the GPU build the kernel check runs in every audit above",
        "`import keras` is Keras 3 only on this stack",
        "auto_scale_loss is Keras 3's compile argument",
        "Keras 2 layers have TF 2.4's attributes",
        "Keras 3 layers lack TF 2.4's attributes",
        "Keras 2 has TF 2.4's OptimizerV2",
        "a Keras 2 code path (Keras 3 has no such base-class behaviour)",
        "Keras 3: test_keras3_refusals.py",
        "tf_keras is installed here, so the legacy switch imports it",
    ),
    OUT_OF_REACH: (
        "out of reach on Keras 3: {}; way out: {}",
        "out of reach on Keras 3, which has no TF1 graph mode; way out: {}",
        "out of reach: {}; way out: {}",
        "Keras 3's DTypePolicy has no '_infer' (see docs/tf24_conformance.md)",
        "Keras {}'s optimizers are not TensorFlow trackables (Keras 3.0; 3.1 made them so)",
        "TensorFlow {}'s XLA finds other float16 overflows than its own eager mode",
    ),
    ENVIRONMENT: (
        "no FIFOs on this platform",
        "switching to an unprivileged user needs root",
        "giving a file to another owner needs root",
        "reads process children from Linux's /proc",
        "mounting a small tmpfs needs root",
        "cannot mount a tmpfs here: {}",
        "this libcst cannot parse the newest syntax in {}",
        "keras is not installed in this environment",
        "the lossscale-compat console script is not installed beside this interpreter",
        "needs `build` (the test extra)",
        "legacy mode's pieces need TensorFlow (the codemod-libcst session has none)",
        "could not import '{}'",  # pytest.importorskip's own text, in the sessions without TensorFlow
    ),
}


def _pattern(start: str) -> re.Pattern:
    return re.compile(".+?".join(re.escape(part) for part in start.split("{}")), re.DOTALL)


_PATTERNS = [(kind, _pattern(start)) for kind, starts in REASONS.items() for start in starts]


def kind_of(reason: str) -> str | None:
    """The kind of skip `reason` is (STACK, OUT_OF_REACH, ENVIRONMENT), or None for a reason not listed here."""
    reason = reason.removeprefix("Skipped: ")
    return next((kind for kind, pattern in _PATTERNS if pattern.match(reason)), None)


def reason_of(longrepr: object) -> str:
    """The reason of a skip report's `longrepr` (pytest gives a (path, line, "Skipped: reason") tuple)."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _unlisted_skip(report: pytest.TestReport | pytest.CollectReport) -> str | None:
    """Why a skip report fails the run: its reason is not listed here; None when it is (or the report is no skip)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    reason = reason_of(report.longrepr)
    if kind_of(reason) is not None:
        return None
    return (
        f"skipped for a reason tests/skip_reasons.py does not list: {reason!r}. Instead, list the reason there under "
        "the kind of skip it is (another stack runs it, out of reach here, the environment lacks a tool), or make "
        "the test run"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Turns a skip for an unlisted reason into a failure."""
    outcome = yield
    report = outcome.get_result()
    why = _unlisted_skip(report)
    if why is not None:
        report.outcome, report.longrepr = "failed", why


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a whole module skipped while it is collected (a module-level `importorskip`)."""
    outcome = yield
    report = outcome.get_result()
    why = _unlisted_skip(report)
    if why is not None:
        report.outcome, report.longrepr = "failed", why
