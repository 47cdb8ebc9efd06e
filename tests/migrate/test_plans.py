"""The passes return frozen values whose plans the command merges once; a rule's site is read-only (issue #32)."""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import libcst as cst
import pytest
from lossscale_compat.codemods import _decide, _engine, migrate_loss_scale

from .helpers import migrate

ROOT = Path(__file__).resolve().parents[2]


def _immutable(value: object) -> bool:
    """Whether `value` is frozen all the way down: frozen dataclasses, tuples, frozensets, read-only mappings."""
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(item) for item in value)
    if isinstance(value, types.MappingProxyType):
        return all(_immutable(key) and _immutable(item) for key, item in value.items())
    if isinstance(value, cst.CSTNode):  # libcst's nodes are frozen
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        frozen = type(value).__dataclass_params__.frozen  # type: ignore[attr-defined]
        return frozen and all(_immutable(getattr(value, field.name)) for field in dataclasses.fields(value))
    return isinstance(value, (cst.CSTNode, str, int, bool, type(None)))


def test_the_check_sees_a_mutable_value():
    assert _immutable((cst.Name("x"), types.MappingProxyType({"a": frozenset()})))
    assert not _immutable(types.MappingProxyType({"a": []}))
    assert not _immutable(_decide._Loop())


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_every_pass_returns_a_frozen_value_over_the_corpus(monkeypatch, target):
    results: list[tuple[str, object]] = []

    def recording(step):
        def run(*args):
            result = step.run(*args)
            results.append((step.name, result))
            return result

        return step._replace(run=run)

    monkeypatch.setattr(migrate_loss_scale, "PASSES", tuple(map(recording, migrate_loss_scale.PASSES)))
    decide_sites = _decide.decide_sites

    def decide_and_record(*args):
        decided = decide_sites(*args)
        results.append(("decide", decided))
        return decided

    monkeypatch.setattr(_decide, "decide_sites", decide_and_record)
    paths = sorted((ROOT / "examples" / "tf24").glob("*.py")) + sorted((ROOT / "tests/migrate/corpus").glob("*.py"))
    for path in paths:
        result = _engine.migrate_source(path.read_bytes(), target, str(path))
        assert result.status in ("changed", "unchanged"), (path, result.error)
    ran = {step.name for step in migrate_loss_scale.PASSES if target == "keras3" or not step.keras3_only}
    assert {name for name, _ in results} == {"decide", *ran}
    assert sorted({name for name, result in results if result is None}) == [], "each pass returns its result"
    assert sorted({name for name, result in results if not _immutable(result)}) == []


def test_the_loss_scale_sites_read_one_frozenset_of_the_calls_kept_on_tf1(monkeypatch):
    seen = []
    decide = _decide.DECIDERS["loss_scale"]
    monkeypatch.setitem(_decide.DECIDERS, "loss_scale", lambda site: seen.append(site) or decide(site))
    new, codes = migrate(
        "import tensorflow as tf\n"
        "opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)\n"
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(\n"
        "    opt, tf.mixed_precision.experimental.DynamicLossScale())\n"
    )
    assert "tf.compat.v1.mixed_precision.DynamicLossScale()" in new and codes == ["LSC127", "LSC127"]
    assert [type(site.kept_for_tf1) for site in seen] == [frozenset]
    (kept,) = seen[0].kept_for_tf1
    assert isinstance(kept, cst.Call) and kept.func.attr.value == "enable_mixed_precision_graph_rewrite"
