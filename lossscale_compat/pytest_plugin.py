"""The pytest plugin (entry point `pytest11`): the equivalence checks and a training recorder as fixtures.

`assert config_summary(old) == config_summary(new)` fails with one line per differing key. Importing this
module imports neither TensorFlow nor the checks; a fixture loads them when a test asks for it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from lossscale_compat._equivalence import ConfigSummary


@pytest.fixture
def assert_config_equivalent() -> Callable[..., None]:
    """`lossscale_compat.testing.assert_config_equivalent`: both sides build the same optimizer."""
    from lossscale_compat import testing

    return testing.assert_config_equivalent


@pytest.fixture
def assert_behaviour_equivalent() -> Callable[..., None]:
    """`lossscale_compat.testing.assert_behaviour_equivalent`: both sides train identically, step by step."""
    from lossscale_compat import testing

    return testing.assert_behaviour_equivalent


@pytest.fixture
def modern_equivalent() -> Callable[..., Any]:
    """`lossscale_compat.testing.modern_equivalent`: the modern optimizer the codemod writes."""
    from lossscale_compat import testing

    return testing.modern_equivalent


@pytest.fixture
def config_summary() -> Callable[..., ConfigSummary]:
    """`lossscale_compat.testing.config_summary`: compare two with `==` for a key-by-key diff on failure."""
    from lossscale_compat import testing

    return testing.config_summary


@pytest.fixture
def record_training(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """Calls `fn(*args, **kwargs)`, tracing its loss-scaled steps into a fresh file; returns the trace's path.

    `record_training(fn, *args, **kwargs)`; hold two traces to each other with `assert_same_training`.
    """
    from lossscale_compat import testing

    def record(function: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
        path = tmp_path_factory.mktemp("trace") / "trace.jsonl"
        return testing.record_training(path, function, *args, **kwargs)

    return record


@pytest.fixture
def assert_same_training() -> Callable[..., None]:
    """`lossscale_compat.testing.assert_same_training`: two recorded runs agree step by step."""
    from lossscale_compat import testing

    return testing.assert_same_training


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: object, right: object) -> list[str] | None:
    """Explains a failed `config_summary(old) == config_summary(new)` key by key."""
    equivalence = sys.modules.get("lossscale_compat._equivalence")
    if op != "==" or equivalence is None:  # never loaded: neither side can be a summary
        return None
    if not (isinstance(left, equivalence.ConfigSummary) and isinstance(right, equivalence.ConfigSummary)):
        return None
    return ["the optimizers are not equivalent:", *equivalence.summary_differences(left, right)]
