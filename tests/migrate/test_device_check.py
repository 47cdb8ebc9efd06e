"""TF's private `device_compatibility_check` (issue 30, pattern 3): imported only to silence the check, it maps to
nothing: the import and the statements that set or call something of it are removed (LSC151), on both sides of a
version guard; any other use keeps the import, warned (LSC110)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from lossscale_compat.codemods import _verify_names, migrate_source
from lossscale_compat.codemods import _warnings as w

from .helpers import check

TARGETS = ("keras3", "tf_keras")


@pytest.mark.parametrize("target", TARGETS)
def test_silencing_the_check_through_tf_2_3s_experimental_package_is_removed(target):
    """Horovod's form. Before: the import was left, failing on the target (the package is gone)."""
    check(
        """\
        import tensorflow as tf

        if tf.__version__.startswith("2.2."):
            from tensorflow.python.keras.mixed_precision.experimental import device_compatibility_check
            device_compatibility_check.log_device_compatibility_check = lambda policy_name, skip_local: None
        x = 1
        """,
        """\
        import tensorflow as tf

        if tf.__version__.startswith("2.2."):
            pass
        x = 1
        """,
        target=target,
        codes=[w.DEVICE_CHECK_DROPPED],
    )


def test_both_sides_of_a_version_guard_and_the_flag_go():
    """NVIDIA's runner: each side imports the module, one statement after the guard sets its flag."""
    check(
        """\
        import tensorflow as tf

        if tf.__version__ >= "2.4":
            from tensorflow.python.keras.mixed_precision import device_compatibility_check
        else:
            from tensorflow.python.keras.mixed_precision.experimental import device_compatibility_check
        device_compatibility_check._logged_compatibility_check = True
        """,
        """\
        import tensorflow as tf

        if tf.__version__ >= "2.4":
            pass
        else:
            pass
        """,
        codes=[w.DEVICE_CHECK_DROPPED, w.DEVICE_CHECK_DROPPED],
    )


def test_an_aliased_import_and_a_call_statement_go():
    check(
        """\
        import tensorflow.python.keras.mixed_precision.device_compatibility_check as dcc

        def quiet():
            dcc.log_device_compatibility_check("mixed_float16")
            return 1
        """,
        """\

        def quiet():
            return 1
        """,
        codes=[w.DEVICE_CHECK_DROPPED],
    )


@pytest.mark.parametrize(
    "statement",
    [
        "from tensorflow.python.keras.mixed_precision.experimental import device_compatibility_check",
        "import tensorflow.python.keras.mixed_precision.experimental.device_compatibility_check as dcc",
    ],
)
def test_an_unused_import_under_a_guard_is_removed(statement):
    """Was LSC110 (tests/migrate/test_real_code_rules.py): an import never used does nothing the target needs."""
    check(
        f"""\
        import tensorflow as tf

        if tf.__version__.startswith("2.2."):
            {statement}
        """,
        """\
        import tensorflow as tf

        if tf.__version__.startswith("2.2."):
            pass
        """,
        codes=[w.DEVICE_CHECK_DROPPED],
    )


def test_a_use_that_reads_the_module_keeps_the_import_warned():
    source = """\
        from tensorflow.python.keras.mixed_precision import device_compatibility_check

        checker = device_compatibility_check.log_device_compatibility_check
        """
    check(source, source, codes=[w.UNSUPPORTED_USE])


def test_a_name_bound_otherwise_too_keeps_the_import_warned():
    source = """\
        try:
            from tensorflow.python.keras.mixed_precision import device_compatibility_check
        except ImportError:
            device_compatibility_check = None
        """
    check(source, source, codes=[w.UNSUPPORTED_USE])


@pytest.mark.parametrize("target", TARGETS)
def test_the_removed_form_leaves_no_silent_name(target):
    source = textwrap.dedent(
        """\
        import tensorflow as tf
        from tensorflow.python.keras.mixed_precision.experimental import device_compatibility_check
        device_compatibility_check._logged_compatibility_check = True
        """
    )
    result = migrate_source(source.encode(), target)
    warned = {result.new_line(f.line) for f in result.findings}
    assert _verify_names.unwarned(ast.parse(result.new), target, warned) == []
    assert b"device_compatibility_check" not in result.new
