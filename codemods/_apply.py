"""The applier: makes a module's frozen plan, and only that.

`apply` rewrites only the paths to the nodes that change and adds the imports the plan needs. What the plan holds
was decided by the rules and planned by `_node_plan` and the passes of `migrate_loss_scale`: the applier imports no
rule, spells no name and refuses nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import libcst as cst

from . import _imports
from ._edits import (
    AddKeyword,
    AssertionCall,
    CurrentScale,
    DtypePolicyOf,
    FirstArgument,
    FoldFactor,
    MovedImport,
    Needed,
    NewAttr,
    NewCall,
    Plan,
)
from ._values import Expr, restyle, restyle_aliases

_KEPT = object()
"""The action of an import alias the plan has none for: it stays."""

_Node = TypeVar("_Node", bound=cst.CSTNode)
_Line = TypeVar("_Line", cst.SimpleStatementLine, cst.SimpleStatementSuite)


def apply(
    module: cst.Module, plan: Plan, parents: Mapping[cst.CSTNode, cst.CSTNode], package: str | None
) -> cst.Module:
    """`module` with the plan's edits made, walking only the paths to the nodes that change, and its imports added."""
    applier = Applier(plan, parents)
    new = module.visit(applier)
    needed = [*plan.needed_imports, *applier.moved_imports]
    if needed:
        new = _imports.add_imports(new, needed, package)
    return new


def changed_paths(plan: Plan, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> set[cst.CSTNode]:
    """Every ancestor of a node the plan changes: the only paths the applier walks."""
    changed = [*plan.replace, *plan.drop_statements, *plan.drop_small, *plan.as_pass, *plan.carry]
    changed.extend(plan.opens_block)
    changed.extend(parent for alias in plan.import_actions if (parent := parents.get(alias)) is not None)
    path: set[cst.CSTNode] = set()
    for node in changed:
        parent = parents.get(node)
        while parent is not None and parent not in path:
            path.add(parent)
            parent = parents.get(parent)
    return path


class Applier(cst.CSTTransformer):
    """Makes a plan's edits, reading the plan only; the from-imports it splits give `moved_imports` to add."""

    def __init__(self, plan: Plan, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.plan = plan
        self.path = changed_paths(plan, parents)
        self.moved_imports: list[Needed] = []
        """Names moved out of a from-import that keeps others: (module, name, alias or None), to add."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Module):
            return super().on_visit(node)
        return node in self.path  # a subtree with nothing to rewrite is left as it is

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> Expr:
        new = self.plan.replace.get(original_node)
        return new if isinstance(new, cst.BaseExpression) else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> Expr:
        new = self.plan.replace.get(original_node)
        if isinstance(new, cst.BaseExpression):
            return new
        if isinstance(new, NewAttr):
            return updated_node.with_changes(attr=cst.Name(new.attr))
        if isinstance(new, CurrentScale):
            method = updated_node.with_changes(attr=cst.Name("scale_loss"), lpar=(), rpar=())
            return cst.Call(
                func=method, args=[cst.Arg(cst.Float("1.0"))], lpar=updated_node.lpar, rpar=updated_node.rpar
            )
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> Expr:
        edit = self.plan.replace.get(original_node)
        if edit is None or isinstance(edit, cst.BaseExpression):
            return updated_node
        if isinstance(edit, AssertionCall):  # `self.assertEqual(a.get_config(), b.get_config())`
            return edit.call
        if isinstance(edit, FirstArgument):  # `opt.get_unscaled_gradients(g)` -> `g`
            return updated_node.args[0].value
        index = {id(arg): i for i, arg in enumerate(original_node.args)}

        def updated(arg: cst.Arg) -> cst.Arg:
            return updated_node.args[index[id(arg)]]

        if isinstance(edit, DtypePolicyOf):
            value = updated(edit.layer).value
            if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            return cst.Attribute(value=value, attr=cst.Name("dtype_policy"))
        if isinstance(edit, NewCall):
            args = [
                updated(arg).with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT) for arg in edit.positional
            ] + list(edit.keywords)
            return updated_node.with_changes(func=edit.func, args=restyle(updated_node.args, args))
        if isinstance(edit, AddKeyword):
            args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in updated_node.args]
            return updated_node.with_changes(args=restyle(updated_node.args, [*args, edit.keyword]))
        if isinstance(edit, FoldFactor):
            return _folded(updated_node, updated(edit.opt).value, edit.keyword)
        raise AssertionError(edit)

    def leave_Assert(self, original_node: cst.Assert, updated_node: cst.Assert) -> cst.Assert | cst.Expr:
        edit = self.plan.replace.get(original_node)
        if isinstance(edit, AssertionCall):  # `assert a.get_config() == b.get_config()`
            return cst.Expr(value=edit.call, semicolon=updated_node.semicolon)
        return updated_node

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> cst.Expr | cst.RemovalSentinel:
        if original_node in self.plan.drop_small:
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        if original_node in self.plan.drop_statements:
            return cst.RemovalSentinel.REMOVE
        return self._small_statements(original_node, updated_node)

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If | cst.RemovalSentinel:
        if original_node in self.plan.drop_statements:  # an `if flag:` that only held a dropped line
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        return self._small_statements(original_node, updated_node)

    def _small_statements(self, original_node: _Line, updated_node: _Line) -> _Line:
        if original_node in self.plan.as_pass:
            return updated_node.with_changes(body=[cst.Pass()])
        if any(small in self.plan.drop_small for small in original_node.body) and updated_node.body:
            last = updated_node.body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(body=[*updated_node.body[:-1], last])
        return updated_node

    def on_leave(
        self, original_node: _Node, updated_node: _Node
    ) -> _Node | cst.RemovalSentinel | cst.FlattenSentinel[_Node]:
        result = super().on_leave(original_node, updated_node)
        if original_node in self.plan.opens_block and isinstance(
            result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)
        ):
            kept = [line for line in result.leading_lines if line.comment is not None]
            result = result.with_changes(leading_lines=kept)
        carried = self.plan.carry.get(original_node)
        if carried and isinstance(result, (cst.Module, cst.IndentedBlock)):
            return result.with_changes(footer=[*carried, *result.footer])
        if carried and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return result.with_changes(leading_lines=[*carried, *result.leading_lines])
        return result

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import | cst.RemovalSentinel:
        kept = [
            new
            for old, new in zip(original_node.names, updated_node.names)
            if self.plan.import_actions.get(old, _KEPT) is not None
        ]
        if len(kept) == len(updated_node.names):
            return updated_node
        if not kept:
            return cst.RemovalSentinel.REMOVE
        return updated_node.with_changes(names=restyle_aliases(updated_node.names, kept))

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.ImportFrom | cst.RemovalSentinel:
        if isinstance(original_node.names, cst.ImportStar) or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        actions = [self.plan.import_actions.get(alias, _KEPT) for alias in original_node.names]
        if all(action is _KEPT for action in actions):
            return updated_node
        kept = [alias for alias, action in zip(updated_node.names, actions) if action is _KEPT]
        moved = [action for action in actions if isinstance(action, MovedImport)]
        modules = {action.module for action in moved}
        if not kept and len(modules) == 1:
            return _moved_whole(updated_node, modules.pop(), moved)
        for module, short, local in moved:
            self.moved_imports.append((module, short, None if local == short else local))
        if not kept:
            return cst.RemovalSentinel.REMOVE
        return updated_node.with_changes(names=restyle_aliases(updated_node.names, kept))


def _folded(call: cst.Call, inner: cst.BaseExpression, keyword: cst.Arg) -> cst.Call:
    """`LossScaleOptimizer(Inner(...), ...)` -> `Inner(..., keyword)`, in the outer call's parentheses if any."""
    assert isinstance(inner, cst.Call)
    args = [*list(inner.args), keyword]
    if inner.args:
        args = restyle(inner.args, [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args])
    return inner.with_changes(lpar=call.lpar or inner.lpar, rpar=call.rpar or inner.rpar, args=args)


def _moved_whole(statement: cst.ImportFrom, module: str, moved: Sequence[MovedImport]) -> cst.ImportFrom:
    """`statement`, all of whose names move to `module`, as a from-import of it (each local name kept)."""
    names = [
        cst.ImportAlias(name=cst.Name(short), asname=None if local == short else cst.AsName(name=cst.Name(local)))
        for _, short, local in moved
    ]
    new_names = restyle_aliases(statement.names, names)  # type: ignore[arg-type]  # not a star: checked by the caller
    return statement.with_changes(module=cst.parse_expression(module), names=new_names, relative=())
