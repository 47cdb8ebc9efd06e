"""The read-only pass's `Facts` are immutable, and a run of the codemod leaves them as they were built."""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider
from lossscale_compat.codemods import _engine, _facts, _scan, _scopes, migrate_loss_scale

ROOT = Path(__file__).resolve().parents[2]
SOURCE = """\
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision
mp = tf.keras.mixed_precision.experimental

def f(opt):
    local = tf.keras.mixed_precision.experimental
    scaled = opt.get_scaled_loss(1.0)
    print(opt.loss_scale, a.get_config())
    return local.LossScaleOptimizer(opt, 'dynamic'), mixed_precision.Policy('mixed_float16')
"""
_LEAVES = (cst.CSTNode, _scopes.Scope, _facts.Positions, str, int, bool, type(None))


def _facts_of(source: str) -> _facts.Facts:
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return _scan.collect_facts(module, source.encode(), lambda: wrapper.resolve(PositionProvider))


def _immutable(value: object) -> bool:
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(item) for item in value)
    if isinstance(value, types.MappingProxyType):
        return all(_immutable(key) and _immutable(item) for key, item in value.items())
    return isinstance(value, _LEAVES)


def _shape(value: object) -> object:
    """What `value` holds, by identity, down through its tuples, frozensets and mappings."""
    if isinstance(value, (tuple, frozenset)):
        return type(value)(_shape(item) for item in value)
    if isinstance(value, types.MappingProxyType):
        return tuple((id(key), _shape(item)) for key, item in value.items())
    return id(value)


def _snapshot(facts: _facts.Facts) -> dict[str, object]:
    return {field.name: _shape(getattr(facts, field.name)) for field in dataclasses.fields(facts)}


def test_the_facts_found_what_the_rules_need():
    facts = _facts_of(SOURCE)
    assert {"tf", "mixed_precision", "mp"} <= set(facts.bindings)
    assert facts.alias_values and facts.local_aliases and facts.sites and facts.loops
    assert facts.other_scale_reads and facts.config_reads and facts.scanned and facts.parents


def test_every_container_of_the_facts_is_immutable():
    facts = _facts_of(SOURCE)
    mutable = [field.name for field in dataclasses.fields(facts) if not _immutable(getattr(facts, field.name))]
    assert mutable == []


def test_a_rule_that_writes_the_facts_fails():
    facts = _facts_of(SOURCE)
    site = facts.sites[0][0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.sites = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        facts.bindings["tf"] = ("keras", site, None)  # type: ignore[index]
    with pytest.raises(TypeError):
        facts.parents[site] = site  # type: ignore[index]
    with pytest.raises(AttributeError):
        facts.alias_values.add(site)  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        facts.loops.append(site)  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        next(iter(facts.local_aliases.values())).append(None)  # type: ignore[attr-defined]


def test_the_snapshot_sees_a_change():
    facts = _facts_of(SOURCE)
    assert _snapshot(facts) == _snapshot(facts)
    assert _snapshot(dataclasses.replace(facts, sites=facts.sites[1:])) != _snapshot(facts)
    object.__setattr__(changed := dataclasses.replace(facts), "roots", frozenset())
    assert _snapshot(changed) != _snapshot(facts)


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_a_run_over_the_corpus_leaves_every_facts_value_as_built(monkeypatch, target):
    built: list[tuple[_facts.Facts, dict[str, object]]] = []

    def collect_and_record(*args, **kwargs):
        facts = _scan.collect_facts(*args, **kwargs)
        built.append((facts, _snapshot(facts)))
        return facts

    monkeypatch.setattr(migrate_loss_scale, "collect_facts", collect_and_record)
    paths = sorted((ROOT / "examples" / "tf24").glob("*.py")) + sorted((ROOT / "tests/migrate/corpus").glob("*.py"))
    assert paths
    changed = 0
    for path in paths:
        result = _engine.migrate_source(path.read_bytes(), target, str(path))
        assert result.status in ("changed", "unchanged"), (path, result.error)
        changed += result.status == "changed"
    assert changed > 0 and len(built) >= changed
    assert [facts.module for facts, before in built if _snapshot(facts) != before] == []
