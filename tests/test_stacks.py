"""The support matrix is one table, and a stack outside it is warned about once, without stopping the program."""

import json
import warnings
from pathlib import Path

import pytest

from lossscale_compat import _stacks


def test_every_tensorflow_minor_has_its_oldest_newest_and_release_day_keras_and_tf_keras():
    for minor, (oldest, newest, tf_keras, *_) in _stacks.TENSORFLOW.items():
        mine = [stack for stack in _stacks.STACKS if stack.tensorflow == minor]
        release_day = _stacks.RELEASE_DAY_KERAS.get(minor, (newest,))[0]
        assert {oldest, newest, release_day} <= {stack.keras for stack in mine if not stack.tf_keras}
        assert any(stack.tf_keras for stack in mine) == tf_keras


def test_every_final_tensorflow_minor_has_its_release_day_keras_recorded():
    finals = {minor for minor, pins in _stacks.TENSORFLOW.items() if len(pins) == 3}
    assert set(_stacks.RELEASE_DAY_KERAS) == finals


def test_the_release_day_keras_came_out_before_its_tensorflow_and_is_accepted_by_it():
    for minor, (keras, tensorflow, tf_date, keras_date) in _stacks.RELEASE_DAY_KERAS.items():
        oldest, newest = _stacks.TENSORFLOW[minor][:2]
        assert tensorflow.startswith(f"{minor}.") and keras_date <= tf_date
        assert _stacks._release(oldest) <= _stacks._release(keras) <= _stacks._release(newest)


def test_every_keras_3_minor_from_3_0_to_the_newest_has_a_stack():
    kerases = {_stacks._release(stack.keras)[:2] for stack in _stacks.STACKS if not stack.keras_2}
    newest = max(kerases)
    assert [minor for minor in range(newest[1] + 1) if (3, minor) not in kerases] == []


def test_the_release_candidate_is_a_pinned_pre_release_stack_in_the_default_run():
    (stack,) = _stacks.PRERELEASE_STACKS
    assert stack.prerelease == "2.22.0rc0" and stack.tests == _stacks.CORE_TESTS
    assert stack.requirements == ["tensorflow-cpu==2.22.0rc0", f"keras-nightly=={stack.keras}"]
    assert stack.name not in _stacks.NOT_YET_IN_CI
    assert "(pre-release)" in next(row for row in _stacks.support_table({}).splitlines() if stack.name in row)


def test_moving_the_candidate_to_final_is_one_line_in_the_data_table(monkeypatch):
    tensorflow = dict(_stacks.TENSORFLOW)
    tensorflow["2.22"] = ("3.16.0", "3.16.0", False)
    monkeypatch.setattr(_stacks, "TENSORFLOW", tensorflow)
    stacks = _stacks._stacks_of("2.22", *tensorflow["2.22"])
    assert [(stack.name, stack.prerelease, stack.requirements) for stack in stacks] == [
        ("tf222-keras3.16", "", ["tensorflow-cpu==2.22.*", "keras==3.16.0"])
    ]


def test_the_tested_candidate_is_not_warned_about_but_its_final_release_is():
    (stack,) = _stacks.PRERELEASE_STACKS
    assert _stacks.untested_reason(stack.prerelease, stack.keras) is None
    assert _stacks.untested_reason(stack.prerelease.replace("rc", "-rc"), stack.keras) is None  # tf.__version__
    assert "not with TensorFlow 2.22.0." in _stacks.untested_reason("2.22.0", "3.15.1")


def test_the_warning_names_the_newest_tested_pre_release():
    reason = _stacks.untested_reason("2.23.0", "3.17.0")
    assert "The newest pre-release tested is TensorFlow 2.22.0rc0 with keras-nightly 3.16.0.dev" in reason
    assert "'tensorflow-cpu==2.22.0rc0'" in reason


def test_pinned_stacks_run_the_hyperparameter_reads_and_the_programs():
    pinned = [stack for stack in _stacks.STACKS if stack.pinned]
    assert pinned and all(stack.tests == _stacks.PINNED_TESTS for stack in pinned)
    assert "tests/legacy/test_hyperparameters.py" in _stacks.PINNED_TESTS
    assert "tests/legacy/test_hyperparameters.py" in _stacks.CORE_TESTS


def test_the_three_full_suite_stacks_exist():
    assert set(_stacks.FULL_SUITE) <= set(_stacks.STACKS_BY_NAME)


@pytest.mark.parametrize("stack", _stacks.STACKS, ids=lambda stack: stack.name)
def test_every_stack_is_inside_the_tested_range(stack):
    assert _stacks.untested_reason(stack.prerelease or f"{stack.tensorflow}.0", stack.keras) is None


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
    assert [path for path in _stacks.CORE_TESTS + _stacks.PINNED_TESTS if not (root / path).exists()] == []


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


def test_the_support_table_in_the_docs_is_generated_from_the_recorded_runs():
    """Should fail when a stack is added, or a record changed, without `nox -s support-table`."""
    table = _stacks.support_table(recorded())
    text = (ROOT / "docs" / "support.md").read_text()
    assert _stacks.with_support_table(text, table) == text


def test_the_support_table_lives_in_docs_support_md_only_and_the_readme_links_to_it():
    readme = (ROOT / "README.md").read_text()
    assert _stacks.TABLE_START not in readme and _stacks.TABLE_END not in readme
    assert "[docs/support.md](docs/support.md)" in readme


def test_each_recorded_run_is_of_a_known_stack_with_its_versions():
    for name, record in recorded().items():
        stack = _stacks.STACKS_BY_NAME[name]
        versions = record["versions"]
        assert (versions.get("tensorflow-cpu") or versions["tensorflow"]).startswith(f"{stack.tensorflow}.")
        assert versions["tf-keras" if stack.tf_keras else stack.keras_package].startswith(
            stack.keras if not stack.tf_keras else f"{stack.tensorflow}.")
        assert record["ran"].startswith(stack.ran)


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
