"""What a rule mixin of the command sees, declared once so that mypy checks each rule module on its own."""

from __future__ import annotations

from libcst.codemod import CodemodContext

from ._edits import Plan
from ._facts import Facts


class RuleBase:
    """Declarations only (no values, so no class attributes at run time): `MigrateLossScaleCommand` sets them."""

    context: CodemodContext
    target: str
    facts: Facts
    """The module's read-only facts; a rule never writes them."""
    plan: Plan
    """What the rules plan for the module, which the command applies."""
