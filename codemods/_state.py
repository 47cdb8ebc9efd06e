"""The per-module state the command's mixins share, declared once so that mypy checks each mixin on its own."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.metadata import CodeRange

from . import _warnings as w
from ._edits import NodeEdit
from ._scopes import GlobalScope, Scope


class CommandState:
    """Declarations only (no values, so no class attributes at run time): `MigrateLossScaleCommand` sets them."""

    context: CodemodContext
    target: str
    source: bytes | None
    findings: list[w.Finding]
    printed: bytes | None
    # The walk: parents, scopes, the nodes the first pass recorded and where each one's subtree ends.
    _module: cst.Module
    _parents: dict[cst.CSTNode, cst.CSTNode]
    _scopes: dict[cst.CSTNode, Scope]
    _global: GlobalScope
    _positions: Mapping[cst.CSTNode, CodeRange] | None
    _scanned: tuple[list[cst.CSTNode], list[int]]
    _tensorflow_class: bool
    _suppressed: set[int]
    # Names: module-level import bindings (local name -> (qualified name, statement, alias or None for an
    # assigned module alias)), function-local module aliases, and the roots a TF 2.4 name can start with.
    _bindings: dict[str, tuple[str, cst.CSTNode, cst.ImportAlias | None]]
    _alias_values: set[cst.CSTNode]
    _local_aliases: dict[str, list[tuple[str, cst.Assign, Scope]]]
    _roots: set[str] | None
    # What the scan found.
    _loops: list[cst.Call]
    _optimizer_scale_reads: list[cst.Attribute]
    _other_scale_reads: list[cst.Attribute]
    _policy_scale_reads: list[cst.Attribute]
    _config_reads: list[cst.Call]
    _private_imports: list[tuple[str, cst.ImportFrom]]
    _tf1_consumers: set[cst.Call]
    _shim_calls: set[cst.Call]
    _folded: set[cst.CSTNode]
    _kept_calls: dict[cst.CSTNode, str]
    _lso_calls: set[cst.CSTNode]
    _blocked_bindings: set[str]
    # The planned rewrite, and the warnings to place.
    _replace: dict[cst.CSTNode, NodeEdit]
    _drop_statements: set[cst.CSTNode]
    _drop_small: set[cst.CSTNode]
    _as_pass: set[cst.CSTNode]
    _carry: dict[cst.CSTNode, list[cst.EmptyLine]]
    _import_actions: dict[cst.ImportAlias, tuple[str, str, str] | None]
    _needed_imports: list[tuple[str, str | None, str | None]]
    _path: set[cst.CSTNode]
    _pending: list[tuple[cst.CSTNode, str]]
