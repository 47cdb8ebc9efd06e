"""The support matrix is one table, and a stack outside it is warned about once, without stopping the program."""

import json
import warnings
from pathlib import Path

import pytest

from lossscale_compat import _stacks


def test_every_tensorflow_minor_has_its_oldest_and_newest_keras_and_tf_keras():
    for minor, (oldest, newest, tf_keras) in _stacks.TENSORFLOW.items():
        mine = [stack for stack in _stacks.STACKS if stack.tensorflow == minor]
        assert {stack.keras for stack in mine if not stack.tf_keras} == {oldest, newest}
        assert any(stack.tf_keras for stack in mine) == tf_keras


def test_the_three_full_suite_stacks_exist():
    assert set(_stacks.FULL_SUITE) <= set(_stacks.STACKS_BY_NAME)


@pytest.mark.parametrize("stack", _stacks.STACKS, ids=lambda stack: stack.name)
def test_every_stack_is_inside_the_tested_range(stack):
    assert _stacks.untested_reason(f"{stack.tensorflow}.0", stack.keras) is None


@pytest.mark.parametrize(
    ("tensorflow", "keras", "named"),
    [
        ("2.22.0", "3.15.1", "TensorFlow 2.22.0"),
        ("2.21.0", "3.16.0", "Keras 3.16.0"),
        ("2.14.1", "2.14.0", "TensorFlow 2.14.1 and Keras 2.14.0"),
        ("2.21.0", "2.22.0", "Keras 2.22.0"),
    ],
)
def test_a_stack_outside_the_range_is_named_with_the_range_and_a_way_out(tensorflow, keras, named):
    reason = _stacks.untested_reason(tensorflow, keras)
    assert f"not with {named}." in reason
    assert "tested with TensorFlow" in reason and "pip install" in reason


def test_the_warning_is_given_once_and_does_not_raise(monkeypatch):
    monkeypatch.setattr(_stacks, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _stacks.warn_if_untested("2.99.0", "3.99.0")
        _stacks.warn_if_untested("2.99.0", "3.99.0")
    assert [w.category for w in caught] == [_stacks.UntestedStackWarning]


def test_the_installed_stack_is_inside_the_range():
    tf = pytest.importorskip("tensorflow")
    from lossscale_compat import _flavour

    assert _stacks.untested_reason(tf.__version__, _flavour.keras_version()) is None


def test_every_core_test_path_exists():
    root = Path(__file__).resolve().parents[1]
    assert [path for path in _stacks.CORE_TESTS if not (root / path).exists()] == []


def test_the_gpu_build_stack_installs_tensorflow_not_tensorflow_cpu_and_runs_tests_that_exist():
    root = Path(__file__).resolve().parents[1]
    for stack in _stacks.GPU_BUILD_STACKS:
        assert _stacks.STACKS_BY_NAME[stack.name] is stack and stack not in _stacks.STACKS
        assert stack.requirements == [f"tensorflow=={stack.tensorflow}.*", f"keras=={stack.keras}"]
    assert "tests/gpu" in _stacks.GPU_BUILD_TESTS
    assert [path for path in _stacks.GPU_BUILD_TESTS if not (root / path).exists()] == []


def test_the_gpu_build_stack_joins_the_table_once_recorded():
    stack = _stacks.GPU_BUILD_STACKS[0]
    assert f"`{stack.name}`" not in _stacks.support_table({})
    record = {"ran": "core tests", "versions": {"tensorflow": "2.21.0", "keras": "3.15.1"}, "passed": 1, "failed": 0,
              "skipped": 0, "xfailed": 0}
    assert f"| `{stack.name}` | 2.21.0 | Keras 3.15.1 | core tests |" in _stacks.support_table({stack.name: record})


ROOT = Path(__file__).resolve().parents[1]


def recorded():
    """Each stack's last run, as `nox -s support-table` keeps it in docs/support.json."""
    return json.loads((ROOT / "docs" / "support.json").read_text())


def test_the_support_table_in_the_docs_and_readme_is_generated_from_the_recorded_runs():
    """Should fail when a stack is added, or a record changed, without `nox -s support-table`."""
    table = _stacks.support_table(recorded())
    for page in (ROOT / "docs" / "support.md", ROOT / "README.md"):
        text = page.read_text()
        assert _stacks.with_support_table(text, table) == text, page


def test_each_recorded_run_is_of_a_known_stack_with_its_versions():
    for name, record in recorded().items():
        stack = _stacks.STACKS_BY_NAME[name]
        versions = record["versions"]
        assert (versions.get("tensorflow-cpu") or versions["tensorflow"]).startswith(f"{stack.tensorflow}.")
        assert versions["tf-keras" if stack.tf_keras else "keras"].startswith(stack.keras if not stack.tf_keras
                                                                               else f"{stack.tensorflow}.")
        assert record["ran"].startswith("whole suite" if stack.full_suite else "core tests")


def test_the_table_gives_each_stacks_counts():
    record = {"stack": "tf221-keras3", "ran": "whole suite", "versions": {"tensorflow-cpu": "2.21.0", "keras": "3.15.1"},
              "passed": 7, "failed": 1, "skipped": 2, "xfailed": 3, "commit": "abc1234"}
    rows = _stacks.support_table({"tf221-keras3": record}).splitlines()
    row = next(line for line in rows if "`tf221-keras3`" in line)
    assert row == ("| `tf221-keras3` | 2.21.0 | Keras 3.15.1 | whole suite | 7 passed, 1 failed, 2 skipped, 3 xfailed "
                   "| abc1234 |")
    assert "| not run |" in _stacks.support_table({})


def test_only_known_core_stacks_wait_outside_ci():
    assert _stacks.NOT_YET_IN_CI <= set(_stacks.STACKS_BY_NAME) - set(_stacks.FULL_SUITE)
