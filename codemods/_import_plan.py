"""Import planning: which legacy imports are rewritten in place, dropped or kept, and how a new name is spelled.

Each planning function returns its own frozen `Plan` (import actions, warnings); `plan_imports` returns `Imports`,
what the import planning settled, which `spell` takes as an argument: a new name is spelled only once the imports
are planned.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterator, Mapping

import libcst as cst

from lossscale_compat import _mapping

from . import _warnings as w
from ._edits import Draft, Keep, MovedImport, Needed, Plan, SiteEdit, merged, new_name_of
from ._facts import Facts
from ._scopes import BuiltinBinding, ClassScope, GlobalScope, ImportBinding, Scope
from ._values import Expr, SourceScale, Unsafe, dotted_expression, full_name, kwarg, root_of


@dataclasses.dataclass(frozen=True, eq=False)
class Imports:
    """What the import planning settled: its plan, and the module-level bindings that must not be respelled in place
    (what `spell` reads)."""

    plan: Plan
    blocked_bindings: frozenset[str]


def plan_local_aliases(facts: Facts, decisions: Mapping[Expr, SiteEdit], folded: Collection[cst.CSTNode]) -> Plan:
    """Drops each function-local alias of a TF 2.4-only module once all its uses are rewritten, else warns."""
    plan = Draft()
    rewritten = {root_of(site) for site, edit in decisions.items() if not isinstance(edit, Keep)}
    rewritten |= {root_of(node) for node in folded}
    for module, statement, scope in (alias for aliases in facts.local_aliases.values() for alias in aliases):
        if module not in _mapping.LEGACY_MODULES or facts.is_suppressed(statement):
            continue
        name = cst.ensure_type(statement.targets[0].target, cst.Name).value
        references = [ref.node for assignment in scope[name] for ref in assignment.references]
        if all(node in rewritten for node in references):
            plan.drop_small.add(statement)
        else:
            plan.warn(statement, w.IMPORT_KEPT)
    return plan.frozen()


def plan_self_aliases(facts: Facts, decisions: Mapping[Expr, SiteEdit], folded: Collection[cst.CSTNode]) -> Plan:
    """Drops each `self.x = <TF 2.4-only module>` once every `self.x` read of its class is rewritten away, else
    warns (LSC122)."""
    plan = Draft()
    covered: set[cst.CSTNode] = set()
    for node in [*(site for site, edit in decisions.items() if not isinstance(edit, Keep)), *folded]:
        while isinstance(node, cst.Attribute):
            covered.add(node)
            node = node.value
    for module, statement, reads in (alias for aliases in facts.self_aliases.values() for alias in aliases.values()):
        if module not in _mapping.LEGACY_MODULES or facts.is_suppressed(statement):
            continue
        if all(read in covered for read in reads):
            plan.drop_small.add(statement)
        else:
            plan.warn(statement, w.IMPORT_KEPT)
    return plan.frozen()


def warn_kept_imports(facts: Facts, decisions: Mapping[Expr, SiteEdit], folded: Collection[cst.CSTNode]) -> Plan:
    """Warns on each import of a TF 2.4 name that stays because some use of it was left alone, or moves a
    module alias to lossscale_compat's module of the same names."""
    plan = Draft()
    covered = {root_of(site) for site, edit in decisions.items() if not isinstance(edit, Keep)}
    covered |= {root_of(node) for node in folded}
    for name, (qualified, statement, alias) in facts.bindings.items():
        if qualified not in _mapping.LEGACY_MODULES and qualified not in _mapping.BY_OLD_NAME:
            continue
        if qualified.startswith("tensorflow.compat.v1."):
            continue  # TensorFlow still ships its v1 compat API; the import resolves
        references = [ref.node for access in facts.global_scope[name] for ref in access.references]
        left = [node for node in references if node not in covered]
        if left and _to_module_fallback(facts, plan, qualified, statement, alias, left):
            plan.warn(statement, w.MODULE_FALLBACK_NOTE)
        elif left:
            plan.warn(statement, w.IMPORT_KEPT)
    return plan.frozen()


def _to_module_fallback(
    facts: Facts,
    plan: Draft,
    qualified: str,
    statement: cst.CSTNode,
    alias: cst.ImportAlias | None,
    left: list[cst.CSTNode],
) -> bool:
    """Moves `from <TF 2.4's keras ...mixed_precision> import experimental as x` to lossscale_compat's module of
    the same names, when every use left on it reads one of them (`x.Policy`, ...). Returns whether it did."""
    if not (
        qualified in _mapping.KERAS_EXPERIMENTAL_MODULES
        and isinstance(statement, cst.ImportFrom)
        and alias is not None
        and not facts.is_suppressed(statement)
    ):
        return False
    for node in left:
        user = facts.parent(node)
        if not (
            isinstance(user, cst.Attribute)
            and user.value is node
            and user.attr.value in _mapping.KERAS_EXPERIMENTAL_NAMES
        ):
            return False
    module, _, short = _mapping.KERAS_EXPERIMENTAL_FALLBACK.rpartition(".")
    local = full_name(alias.asname.name if alias.asname is not None else alias.name) or short
    plan.import_actions[alias] = MovedImport(module, short, local)
    return True


def plan_private_imports(facts: Facts) -> Plan:
    """Moves each from-import of only `_mapping.PRIVATE_NAMES` to lossscale_compat's names, the local names kept."""
    plan = Draft()
    for module, statement in facts.private_imports:
        assert not isinstance(statement.names, cst.ImportStar)  # as `SiteCollector.visit_ImportFrom` found
        for alias in statement.names:
            local = alias.evaluated_alias or alias.evaluated_name
            new = _mapping.PRIVATE_NAMES[f"{module}.{alias.evaluated_name}"]
            checks = _class_checks(facts, statement, local) if new in _mapping.CLASS_CHECK_NAMES else []
            if checks and all(checks):  # only read by `isinstance`/`issubclass`: the name true for every kind
                new = _mapping.CLASS_CHECK_NAMES[new]
            elif any(checks):  # also called: our class under the name, and each check left to a person
                for reference, checked in zip(_references(facts, statement, local), checks):
                    if checked:
                        plan.warn(reference, w.UNSUPPORTED_USE)
            new_module, _, short = new.rpartition(".")
            plan.import_actions[alias] = MovedImport(new_module, short, local)
        plan.warn(statement, w.PRIVATE_IMPORT_NOTE)
    return plan.frozen()


def _references(facts: Facts, statement: cst.ImportFrom, local: str) -> list[cst.CSTNode]:
    """The reads of the name `local` that `statement` binds, in its scope."""
    scope = facts.scopes.get(statement) or facts.global_scope
    return [ref.node for binding in scope[local] if binding.node is statement for ref in binding.references]


def _class_checks(facts: Facts, statement: cst.ImportFrom, local: str) -> list[bool]:
    """For each read of the name `statement` binds, whether `isinstance`/`issubclass` checks it."""
    return [facts.class_checked(node) for node in _references(facts, statement, local)]


def _site_binding(facts: Facts, site: Expr) -> str | None:
    """Returns the module-level from-import binding a bare-name site uses, if any."""
    if isinstance(site, cst.Name) and site.value in facts.bindings:
        binding = facts.bindings[site.value]
        if isinstance(binding[1], cst.ImportFrom):
            return site.value
    return None


NestedImport = tuple["cst.Import | cst.ImportFrom", cst.ImportAlias, str, str]
"""(statement, alias, qualified name, local name) of an import of a TF 2.4 name below module level."""


def nested_imports(facts: Facts) -> Iterator[NestedImport]:
    """Each alias of an import of a TF 2.4 name or module inside a function, class, `if`, `try` or `with`: every
    import that is not a line of the module's own body (`import a.b` without `as` binds `a`: not one of these)."""
    for node in facts.scanned:
        if type(node) is cst.Import:
            prefix = ""
        elif type(node) is cst.ImportFrom and not node.relative and node.module is not None:
            prefix = (full_name(node.module) or "") + "."
        else:
            continue
        line = facts.parent(node)
        if isinstance(line, cst.SimpleStatementLine) and isinstance(facts.parent(line), cst.Module):
            continue
        assert isinstance(node, (cst.Import, cst.ImportFrom))  # as its type said
        if isinstance(node.names, cst.ImportStar):
            continue
        for alias in node.names:
            if isinstance(node, cst.Import) and alias.asname is None:
                continue
            qualified = prefix + (full_name(alias.name) or "")
            if qualified in _mapping.LEGACY_MODULES or qualified in _mapping.BY_OLD_NAME:
                yield node, alias, qualified, alias.evaluated_alias or alias.evaluated_name


def _nested_site_alias(facts: Facts, site: Expr) -> cst.ImportAlias | None:
    """The alias of the nested from-import that a bare-name site is bound by, when it is its only binding."""
    if not isinstance(site, cst.Name):
        return None
    scope = facts.scopes.get(site)
    if scope is None or site.value not in scope:
        return None
    bindings = list(scope[site.value])
    if len(bindings) != 1 or not isinstance(bindings[0].node, cst.ImportFrom):
        return None
    statement = bindings[0].node
    if isinstance(statement.names, cst.ImportStar):
        return None
    for alias in statement.names:
        if (alias.evaluated_alias or alias.evaluated_name) == site.value:
            return alias
    return None


def plan_nested_imports(facts: Facts, decisions: Mapping[Expr, SiteEdit], folded: Collection[cst.CSTNode]) -> Plan:
    """Plans the imports of TF 2.4 names below module level as `plan_imports` does the module's own: a from-import
    of a name whose every use is rewritten to one new name is rewritten in place, one whose every use is rewritten
    away from it (a module held by an import included) is removed, and one with a use left, or in a class body (a
    class attribute), is warned. A name bound more than once in its scope (a `try`/`except ImportError` version
    guard) is left to its uses' own warnings."""
    plan = Draft()
    rewritten = {root_of(site) for site, edit in decisions.items() if not isinstance(edit, Keep)}
    rewritten |= {root_of(node) for node in folded}
    new_names: dict[cst.ImportAlias, set[str]] = {}
    for site, edit in decisions.items():
        alias = _nested_site_alias(facts, site)
        if alias is not None and (new := new_name_of(edit)) is not None:
            new_names.setdefault(alias, set()).add(new)
    for statement, alias, qualified, local in nested_imports(facts):
        scope = facts.scopes.get(statement)
        if scope is None or facts.is_suppressed(statement):
            continue
        bindings = scope.assignments[local]
        if len(bindings) != 1:
            continue
        if isinstance(scope, ClassScope):  # a class attribute, read as `self.x` where no scope sees it
            plan.warn(statement, w.IMPORT_KEPT)
            continue
        references = [ref.node for ref in bindings[0].references]
        if not all(node in rewritten for node in references):
            if not qualified.startswith("tensorflow.compat.v1."):  # TensorFlow still ships its v1 compat API
                plan.warn(statement, w.IMPORT_KEPT)
            continue
        names = new_names.get(alias, set())
        line = facts.parent(statement)
        if len(names) == 1 and isinstance(statement, cst.ImportFrom):
            module, _, short = next(iter(names)).rpartition(".")
            new_local = local if alias.asname is not None or short == local or short in scope else short
            plan.import_actions[alias] = MovedImport(module, short, new_local)
        elif isinstance(line, cst.SimpleStatementLine):
            plan.import_actions[alias] = None  # removed by leave_Import/leave_ImportFrom
        else:
            plan.warn(statement, w.IMPORT_KEPT)  # `if x: import a` on one line: no line of its own to remove
    return plan.frozen()


def plan_imports(facts: Facts, decisions: Mapping[Expr, SiteEdit], folded: Collection[cst.CSTNode]) -> Imports:
    """The import planning: per legacy from-import at module level, whether it is rewritten in place, dropped or
    kept; then the nested imports (`plan_nested_imports`) and those of private names (`plan_private_imports`)."""
    plan = Draft()
    blocked: set[str] = set()
    by_binding: dict[str, list[SiteEdit]] = {}
    for site, edit in decisions.items():
        name = _site_binding(facts, site)
        if name is not None:
            by_binding.setdefault(name, []).append(edit)
    for name, (qualified, statement, alias) in facts.bindings.items():
        row = _mapping.BY_OLD_NAME.get(qualified)
        if row is not None and isinstance(statement, cst.ImportFrom) and alias is not None:
            if facts.is_suppressed(statement):
                blocked.add(name)
                continue
            uses = by_binding.get(name, [])
            accesses = facts.global_scope[name]
            n_access = sum(len(a.references) for a in accesses)
            n_folded = sum(1 for access in accesses for ref in access.references if ref.node in folded)
            if any(isinstance(edit, Keep) for edit in uses) or len(uses) + n_folded != n_access:
                blocked.add(name)
                continue
            new_names = {new for edit in uses if (new := new_name_of(edit)) is not None}
            if not new_names:
                plan.import_actions[alias] = None
                continue
            if len(new_names) != 1:  # every use rewritten, to names of more than one module: each spelled in full
                plan.import_actions[alias] = None
                continue
            new = next(iter(new_names))
            module, _, short = new.rpartition(".")
            local = name
            if alias.asname is None and short != name:
                local = short if short not in facts.global_scope else name
            plan.import_actions[alias] = MovedImport(module, short, local)
        elif alias is None and isinstance(statement, cst.Assign):  # a module alias made by assignment
            if qualified in _mapping.LEGACY_MODULES and not facts.is_suppressed(statement):
                if _all_uses_rewritten(facts, folded, name, decisions):  # `name = <TF 2.4 module>`
                    plan.drop_small.add(statement)
        elif alias is not None and (qualified in _mapping.LEGACY_MODULES or row is not None):
            if not facts.is_suppressed(statement) and _all_uses_rewritten(facts, folded, name, decisions):
                plan.import_actions[alias] = None  # removed by leave_Import/leave_ImportFrom
    parts = (plan.frozen(), plan_nested_imports(facts, decisions, folded), plan_private_imports(facts))
    return Imports(merged(parts), frozenset(blocked))


def _all_uses_rewritten(
    facts: Facts, folded: Collection[cst.CSTNode], name: str, decisions: Mapping[Expr, SiteEdit]
) -> bool:
    """Whether every use of the module-level `name` is rewritten away from it (or folded into a rewrite)."""
    rewritten = {root_of(site) for site, edit in decisions.items() if not isinstance(edit, Keep)}
    rewritten |= {root_of(node) for node in folded}
    return all(ref.node in rewritten for access in facts.global_scope[name] for ref in access.references)


def _spellings(target: str, new: str) -> list[str]:
    """The dotted names `new` may be written as: itself, on Keras 3 `tensorflow.keras...` too, and through
    `tensorflow.compat.v2` (TF 2's API, the same `keras` as `tf.keras` on every recorded stack) what TF holds."""
    names = [new, "tensorflow." + new] if target == "keras3" and new.startswith("keras.") else [new]
    compat = ["tensorflow.compat.v2." + name[len("tensorflow.") :] for name in names if name.startswith("tensorflow.")]
    return names + compat


def spell(facts: Facts, target: str, imports: Imports, new: str, site: Expr) -> tuple[Expr, tuple[Needed, ...]]:
    """(An expression for the dotted name `new` at `site`, the import it needs if any), read from the planned
    `imports`; raises Unsafe on a name clash."""
    binding_name = _site_binding(facts, site)
    actions = imports.plan.import_actions
    if binding_name is not None and binding_name not in imports.blocked_bindings:
        alias = facts.bindings[binding_name][2]
        action = actions.get(alias) if alias is not None else None
        if action:
            return cst.Name(action.local), ()
    nested = _nested_site_alias(facts, site) if binding_name is None else None
    action = actions.get(nested) if nested is not None else None
    if action:
        return cst.Name(action.local), ()
    candidates = _spellings(target, new)
    dotted = full_name(site) or ""
    root = dotted.split(".")[0]
    scope = facts.scopes.get(site)
    usable = []
    for name, (qualified, _statement, _alias) in facts.bindings.items():
        if scope is not None and name in scope and set(scope[name]) != set(facts.global_scope[name]):
            continue
        for candidate in candidates:
            if candidate == qualified or candidate.startswith(qualified + "."):
                rank = (name != root, candidate.startswith("tensorflow.compat."), -len(qualified), name)
                usable.append((rank, name + candidate[len(qualified) :]))
    if usable:
        return dotted_expression(min(usable)[1]), ()
    local = _local_spelling(facts, scope, candidates, site) if scope is not None else None
    if local is not None:
        return dotted_expression(local), ()
    top = new.split(".")[0]
    if top in facts.global_scope or (scope is not None and top in scope):
        raise Unsafe(w.NAME_CLASH)
    return dotted_expression(new), ((top, None, None),)


def _local_spelling(facts: Facts, scope: Scope, candidates: list[str], site: Expr) -> str | None:
    """A spelling of one of `candidates` through a module that an import in an enclosing function binds: once, in the
    function's own body (not under an `if` or `try`) and above the site, so that no new import is needed there."""
    usable = []
    if isinstance(scope, GlobalScope):
        return None  # positions are resolved only where a function may import TensorFlow
    try:
        line = facts.position(site).start.line
    except KeyError:
        return None  # a node the codemod built
    current = scope
    while not isinstance(current, GlobalScope) and current.parent is not current:
        for name in current.bound_names:
            bindings = list(scope[name])  # as the site sees the name
            if len(bindings) != 1 or not isinstance(bindings[0], ImportBinding):
                continue
            statement = bindings[0].node
            assert statement is not None  # an import binding has its statement
            line_of = facts.parent(statement)
            block = facts.parent(line_of) if line_of is not None else None
            in_body = block is not None and isinstance(facts.parent(block), cst.FunctionDef)
            if facts.position(statement).start.line >= line or not in_body:
                continue
            for qualified in (q.name for q in bindings[0].own_qualified_names()):
                for candidate in candidates:
                    if candidate == qualified or candidate.startswith(qualified + "."):
                        rank = (candidate.startswith("tensorflow.compat."), -len(qualified), name)
                        usable.append((rank, name + candidate[len(qualified) :]))
        current = current.parent
    return min(usable)[1] if usable else None


def modern_keywords(facts: Facts, scale: SourceScale, site: Expr) -> list[cst.Arg]:
    """The modern keyword arguments of `scale`, read expressions as written; raises Unsafe on a name clash."""
    return [kwarg(key, _source_of(facts, key, value, scale, site)) for key, value in scale.kwargs().items()]


def _source_of(facts: Facts, key: str, value: object, scale: SourceScale, site: Expr) -> Expr:
    """The source for one of `scale.kwargs()`: read expressions as written, `dynamic=False` spelled out."""
    if key == "dynamic":
        return cst.Name("False")
    assert isinstance(value, cst.BaseExpression)
    return _as_float(facts, value, site) if key == "initial_scale" and scale.dynamic else value


def _as_float(facts: Facts, value: Expr, site: Expr) -> Expr:
    """Returns `value`, or `float(value)` where Keras 3 could not take it as TF 2.4's float() did."""
    if isinstance(value, cst.Float) or (isinstance(value, cst.Integer) and abs(value.evaluated_value) < 2**63):
        return value
    scope = facts.scopes.get(site) or facts.global_scope
    if any(not isinstance(binding, BuiltinBinding) for binding in scope["float"]):
        raise Unsafe(w.NAME_CLASH)
    return cst.Call(func=cst.Name("float"), args=[cst.Arg(value=value)])
