"""The skip audit (issue 47): every skip's reason is listed in tests/skip_reasons.py, and the conftest hook fails
a test skipped for any other reason."""

from pathlib import Path

import skip_reasons


def test_each_kind_of_reason_is_recognised_and_an_unlisted_one_is_not():
    assert skip_reasons.kind_of("Keras 3 has no OptimizerV2 (tested below for its error)") == skip_reasons.STACK
    assert skip_reasons.kind_of("Skipped: --target tf_keras runs only where tf.keras is Keras 2 (x); this stack is "
                                "not") == skip_reasons.STACK
    assert skip_reasons.kind_of("out of reach on Keras 3: Keras 3's model.save has no SavedModel format; way out: "
                                "TF_USE_LEGACY_KERAS=1 (tf_keras)") == skip_reasons.OUT_OF_REACH
    assert skip_reasons.kind_of("could not import 'tensorflow': No module named 'tensorflow'") == \
        skip_reasons.ENVIRONMENT
    assert skip_reasons.kind_of("flaky on this machine") is None
    assert skip_reasons.kind_of("out of reach on Keras 3: no way out given") is None  # a documented skip names one


def test_a_skip_for_an_unlisted_reason_fails_the_run(pytester):
    pytester.syspathinsert(Path(skip_reasons.__file__).parent)
    # A module name no test file of the suite has: pytest imports both as top-level modules (tests/trace/test_skips.py).
    pytester.makepyfile(
        test_audited_skips="""
import pytest

def test_listed():
    pytest.skip("Keras 3 has no OptimizerV2 (tested below for its error)")

def test_unlisted():
    pytest.skip("flaky on this machine")

@pytest.mark.skipif(True, reason="no FIFOs on this platform")
def test_listed_mark():
    pass

@pytest.mark.skipif(True, reason="not today")
def test_unlisted_mark():
    pass

@pytest.mark.xfail(reason="any reason", strict=True)
def test_an_expected_failure():
    assert False
""",
        test_module_skip="""
import pytest
pytest.importorskip("no_such_module_for_the_audit", reason="nobody listed this")
""",
    )
    result = pytester.runpytest("-p", "skip_reasons", "-p", "no:cacheprovider", "--continue-on-collection-errors")
    result.assert_outcomes(skipped=2, failed=1, xfailed=1, errors=2)  # a skipif mark fails at set-up: an error
    result.stdout.fnmatch_lines(["*skipped for a reason tests/skip_reasons.py does not list: 'flaky on this machine'*"])
    without = pytester.runpytest("-p", "no:cacheprovider")  # the same tests without the audit: all skips pass
    without.assert_outcomes(skipped=5, xfailed=1)
