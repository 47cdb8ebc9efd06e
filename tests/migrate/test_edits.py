"""The rule for a site comes from its row of the mapping table, and every kind of edit a rule decides is applied."""

from __future__ import annotations

import typing

from lossscale_compat import _mapping
from lossscale_compat.codemods import _decide, _edits, _node_plan


def test_every_rule_of_the_table_has_a_decider():
    assert set(_decide.DECIDERS) == set(_mapping.RULES)
    assert {row.rule for row in _mapping.RENAMES} <= set(_decide.DECIDERS)


def test_every_site_edit_is_planned():
    assert set(_node_plan.BY_EDIT) == set(typing.get_args(_edits.SiteEdit))


def test_an_edit_names_what_an_import_of_its_site_becomes():
    assert _edits.new_name_of(_edits.NewName("keras.mixed_precision.global_policy")) == (
        "keras.mixed_precision.global_policy"
    )
    assert _edits.new_name_of(_edits.KEEP) is None
