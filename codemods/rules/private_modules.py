"""TF's private Keras mixed-precision modules imported as modules: their uses moved to lossscale_compat, or warned."""

from __future__ import annotations

import libcst as cst

from lossscale_compat import _mapping

from .. import _import_plan
from .. import _warnings as w
from .._edits import Draft, Plan
from .._facts import Facts
from .._import_plan import Imports
from .._values import Unsafe, full_name


def _private(module: str) -> bool:
    """Whether `module` is in TF's private Keras mixed-precision package, outside TF <= 2.3's experimental one
    (the scan warns that one, and its modules with rows are sites)."""
    return (module + ".").startswith(_mapping.PRIVATE_KERAS_ROOT + ".") and not (module + ".").startswith(
        _mapping.PRIVATE_KERAS_PACKAGE + "."
    )


def plan_private_modules(facts: Facts, target: str, imports: Imports) -> Plan:
    """Plans each import of a private mixed-precision module as a module, never leaving one silently; the uses it
    moves are spelled from the planned `imports`."""
    plan = Draft()
    for node in facts.scanned:
        if not isinstance(node, (cst.Import, cst.ImportFrom)) or facts.is_suppressed(node):
            continue
        if node in {statement for _, statement in facts.private_imports}:
            continue  # names only: `_import_plan.plan_private_imports`
        codes = {_plan_private_alias(facts, target, imports, plan, node, alias) for alias in _aliases(node)}
        for code in sorted(code for code in codes if code is not None):
            plan.warn(node, code)
    return plan.frozen()


def _aliases(node: cst.Import | cst.ImportFrom) -> list[cst.ImportAlias]:
    if isinstance(node, cst.Import):
        return list(node.names)
    if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
        return []
    return list(node.names)


def _plan_private_alias(
    facts: Facts, target: str, imports: Imports, plan: Draft, node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias
) -> str | None:
    """The code for one imported name: LSC140 when its module's uses moved, LSC110 when a private module or name
    is left, None when another rule decides it (a name of `PRIVATE_NAMES`, a module with rows)."""
    name = full_name(alias.name) or ""
    local: str | None = alias.evaluated_alias
    if isinstance(node, cst.ImportFrom):
        module = full_name(node.module) if node.module is not None else None
        if module is None:
            return None
        name = f"{module}.{name}"
        local = alias.evaluated_alias or alias.evaluated_name
    handled = name in _mapping.BY_OLD_NAME or name in _mapping.LEGACY_MODULES or name in _mapping.MODULE_PREFIXES
    if name in _mapping.DEVICE_CHECK_MODULES:
        return None  # `plan_device_checks`
    if name in _mapping.PRIVATE_MODULES:
        return (
            _move_module_uses(facts, target, imports, plan, node, alias, name, local)
            if local is not None
            else w.UNSUPPORTED_USE
        )
    if handled or name in _mapping.PRIVATE_NAMES:
        return None
    return w.UNSUPPORTED_USE if _private(name) else None


def _move_module_uses(
    facts: Facts,
    target: str,
    imports: Imports,
    plan: Draft,
    node: cst.CSTNode,
    alias: cst.ImportAlias,
    module: str,
    local: str,
) -> str | None:
    """Rewrites each `<local>.X` to lossscale_compat's X and drops the import, if it provides every X read; in a
    module the target still has (`_mapping.PRIVATE_MODULES_KEPT`), moves the X it provides and keeps the rest."""
    kept = module in _mapping.PRIVATE_MODULES_KEPT
    binding = facts.bindings.get(local)
    if binding is None or binding[1] is not node:
        return None if kept else w.UNSUPPORTED_USE  # bound more than once, or not at module level
    reads: list[tuple[cst.Attribute, str]] = []
    others = False  # a read the target still has, of a kept module
    for assignment in facts.global_scope[local]:
        for reference in assignment.references:
            use = facts.parent(reference.node)
            new = _mapping.PRIVATE_NAMES.get(f"{module}.{use.attr.value}") if isinstance(use, cst.Attribute) else None
            if (
                not isinstance(use, cst.Attribute)
                or use.value is not reference.node
                or new is None
                or isinstance(facts.parent(use), (cst.AssignTarget, cst.AugAssign, cst.Del))
            ):
                if not kept:
                    return w.UNSUPPORTED_USE
                others = True
                continue
            reads.append((use, _mapping.CLASS_CHECK_NAMES.get(new, new) if facts.class_checked(use) else new))
    if kept and not reads:
        return None
    try:
        spelled = [(use, _import_plan.spell(facts, target, imports, new, use)) for use, new in reads]
    except Unsafe as unsafe:
        return unsafe.code
    for use, (expression, needed) in spelled:
        plan.replace[use] = expression
        plan.needed_imports.extend(needed)
    if not others:
        plan.import_actions[alias] = None
    return w.PRIVATE_IMPORT_NOTE


def plan_device_checks(facts: Facts) -> Plan:
    """Removes each import of TF's private `device_compatibility_check` (`_mapping.DEVICE_CHECK_MODULES`) with the
    statements that only set an attribute of it or call something of it, where every binding of its local name in
    its scope is such an import (both sides of a version guard) and every use such a statement: LSC151. Else the
    import is warned (LSC110)."""
    plan = Draft()
    groups: dict[tuple[int, str], list[tuple[cst.Import | cst.ImportFrom, cst.ImportAlias]]] = {}
    scopes = {}
    for node in facts.scanned:
        if not isinstance(node, (cst.Import, cst.ImportFrom)) or facts.is_suppressed(node):
            continue
        for alias in _aliases(node):
            local = _device_check_local(node, alias)
            scope = facts.scopes.get(node)
            if local is not None and scope is not None:
                groups.setdefault((id(scope), local), []).append((node, alias))
                scopes[id(scope)] = scope
    for (scope_id, local), imports in groups.items():
        statements = {node for node, _ in imports}
        drops = _device_check_uses(facts, scopes[scope_id], local, statements)
        for node in statements:
            plan.warn(node, w.UNSUPPORTED_USE if drops is None else w.DEVICE_CHECK_DROPPED)
        if drops is not None:
            plan.drop_small.update(drops)
            plan.import_actions.update((alias, None) for _, alias in imports)
    return plan.frozen()


def _device_check_local(node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> str | None:
    """The local name `alias` binds to a device-check module, or None when it binds none (or a package)."""
    name = full_name(alias.name) or ""
    if isinstance(node, cst.ImportFrom):
        name = f"{full_name(node.module) if node.module is not None else ''}.{name}"
    elif alias.asname is None:
        return None  # `import a.b.c` binds `a`
    return (alias.evaluated_alias or alias.evaluated_name) if name in _mapping.DEVICE_CHECK_MODULES else None


def _device_check_uses(
    facts: Facts, scope: object, local: str, statements: set[cst.Import | cst.ImportFrom]
) -> list[cst.BaseSmallStatement] | None:
    """The statements to remove with the imports: `m.x = v` and `m.f(...)` as statements of their own; None when a
    binding of `local` in its scope is not one of `statements` or a use is anything else."""
    bindings = list(scope.assignments[local])  # type: ignore[attr-defined]  # a `_scopes.Scope`
    if not bindings or any(binding.node not in statements for binding in bindings):
        return None
    drops: list[cst.BaseSmallStatement] = []
    for binding in bindings:
        for reference in binding.references:
            use = facts.parent(reference.node)
            if not isinstance(use, cst.Attribute) or use.value is not reference.node:
                return None
            holder = facts.parent(use)
            statement = facts.parent(holder) if holder is not None else None
            if isinstance(holder, cst.AssignTarget) and isinstance(statement, cst.Assign):
                if len(statement.targets) != 1:
                    return None
            elif isinstance(holder, cst.Call) and holder.func is use and isinstance(facts.parent(holder), cst.Expr):
                statement = facts.parent(holder)
            else:
                return None
            assert isinstance(statement, (cst.Assign, cst.Expr))  # as checked
            drops.append(statement)
    return drops
