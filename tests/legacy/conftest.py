"""Fixtures shared by the legacy-mode tests."""

import warnings

import pytest

import lossscale_compat


@pytest.fixture
def legacy_mode():
    """Legacy mode on for one test, its deprecation warnings silenced; a module's own `legacy_mode` overrides it."""
    lossscale_compat.install()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lossscale_compat.LossScaleDeprecationWarning)
        yield
    lossscale_compat.uninstall()
