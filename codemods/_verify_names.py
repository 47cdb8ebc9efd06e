"""The verifier: finds every reference to a mixed-precision name in the codemod's output that the target lacks.

References are imports at any depth, dotted names through any alias (an import, `name = a.b`, `self.x = a.b`,
`name = importlib.import_module("a.b")`), `importlib.import_module("a.b")` (also through `import importlib as il`,
`from importlib import import_module as im`, `im = importlib.import_module` or `getattr(importlib, "import_module")`)
and `getattr(x, "b")` with literal strings. `tensorflow.compat.v1.compat.v2` reads as `tensorflow.compat.v2`. A
reference inside a `try` whose handler catches ImportError or AttributeError, or inside such a handler, is a version
guard and is not reported. What a target has is `_target_names`' recorded data; this module never imports TensorFlow.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator

from . import _target_names

GATE_WORDS = (b"mixed_precision", b"LossScale", b"loss_scale")
"""Every watched mixed-precision name, and so every file that references one by a literal, spells one of these."""
_GUARDS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"})
_COMPAT = re.compile(r"^tensorflow(?:\.compat\.v[12])*\.compat\.(v[12])(?=\.|$)")


def may_reference(data: bytes) -> bool:
    """Whether `data` could reference a watched mixed-precision name (cheap byte test)."""
    return any(word in data for word in GATE_WORDS)


def _normal(name: str) -> str:
    """`tensorflow.compat.v1.compat.v2.x` -> `tensorflow.compat.v2.x`: the last compat namespace decides."""
    return _COMPAT.sub(r"tensorflow.compat.\1", name) if name.startswith("tensorflow.compat.") else name


class _Module:
    """What one walk of a module's tree collects."""

    def __init__(self) -> None:
        self.aliases: dict[str, set[str]] = {}  # local dotted name -> the full names it may stand for
        self.refs: list[tuple[ast.AST, str]] = []  # (node, full name) of imports and literal look-ups
        self.chains: list[ast.expr] = []  # outermost Name/Attribute chains, resolved once aliases are known
        self.assigns: list[tuple[str, ast.expr]] = []
        self.calls: list[tuple[str, ast.Call]] = []  # (assigned name or "", call), read once importers are known
        self.guarded: list[tuple[int, int]] = []  # line spans of `try` bodies guarded by ImportError & co
        self.statements: list[tuple[int, int]] = []  # (first line, last line) of each simple statement


def _dotted(node: ast.expr) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


_IMPORTERS = frozenset({"import_module", "__import__"})


def _importers(found: _Module) -> frozenset[str]:
    """The local names that call `importlib.import_module`: its own name, `from importlib import import_module as
    im` and `im = importlib.import_module` (through any alias of importlib)."""
    names = {local for local, fulls in found.aliases.items() if "importlib.import_module" in fulls}
    for local, value in found.assigns:
        parts = _dotted(value)
        if parts and any(full == "importlib.import_module" for full, _ in _resolve(parts, found.aliases)):
            names.add(local)
    names.update(local for local, call in found.calls if local and _importer_by_getattr(call))
    return _IMPORTERS | names


def _importer_by_getattr(node: ast.expr) -> str | None:
    """Which importer `node` fetches, where it is `getattr(x, "import_module")` or `getattr(x, "__import__")`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"):
        return None
    attr = node.args[1] if len(node.args) == 2 else None
    return attr.value if isinstance(attr, ast.Constant) and attr.value in _IMPORTERS else None


def _import_module_arg(node: ast.Call, importers: frozenset[str] = _IMPORTERS) -> str | None:
    """The literal module name of `importlib.import_module("a.b")` (through any alias of importlib or of the
    function, `importers`), `import_module(name="a.b")`, a relative `import_module(".b", "a")` or `__import__("a.b")`,
    else None."""
    func = node.func
    if isinstance(func, ast.Attribute):
        name = func.attr if func.attr in _IMPORTERS else None
    elif isinstance(func, ast.Call):
        name = _importer_by_getattr(func)
    else:
        name = func.id if isinstance(func, ast.Name) and func.id in importers else None
    if name is None:
        return None
    if name != "__import__":
        name = "import_module"
    given = {keyword.arg: keyword.value for keyword in node.keywords}
    module = node.args[0] if node.args else given.get("name")
    package = node.args[1] if len(node.args) > 1 else given.get("package")
    value = module.value if isinstance(module, ast.Constant) else None
    if not isinstance(value, str):
        return None
    if name == "import_module" and value.startswith("."):
        base = package.value if isinstance(package, ast.Constant) else None
        if not isinstance(base, str):
            return None
        dots = len(value) - len(value.lstrip("."))
        parts = base.split(".")
        if dots > len(parts):
            return None
        value = ".".join([*parts[: len(parts) - dots + 1], value[dots:]]).rstrip(".")
    return value


def _catches(handler: ast.ExceptHandler) -> bool:
    """Whether `handler` catches what a missing name raises (ImportError, AttributeError or a base of them)."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for kind in kinds:
        if kind is None or (isinstance(kind, ast.Name) and kind.id in _GUARDS):
            return True
        if isinstance(kind, ast.Attribute) and kind.attr in _GUARDS:
            return True
    return False


def _guarded_spans(node: ast.Try) -> list[tuple[int, int]]:
    """The line spans of a version guard: the `try` body and each handler that catches a missing name (`try: <new
    import> except ImportError: <old import>` keeps working on both sides, whichever side the old name is on)."""
    handlers = [handler for handler in node.handlers if _catches(handler)]
    if not handlers or not node.body:
        return []
    blocks = [node.body, *(handler.body for handler in handlers)]
    return [(block[0].lineno, block[-1].end_lineno or block[-1].lineno) for block in blocks if block]


def _collect_import(node: ast.Import | ast.ImportFrom, found: _Module) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            found.refs.append((node, alias.name))
            local = alias.asname or alias.name.split(".")[0]
            found.aliases.setdefault(local, set()).add(alias.name if alias.asname else local)
    elif node.module and not node.level:
        for alias in node.names:
            full = node.module if alias.name == "*" else f"{node.module}.{alias.name}"
            found.refs.append((node, full))
            if alias.name != "*":
                found.aliases.setdefault(alias.asname or alias.name, set()).add(full)


def _collect_assign(node: ast.Assign, found: _Module) -> None:
    if len(node.targets) != 1:
        return
    target = _dotted(node.targets[0])
    if target is None or len(target) > 2:
        return
    value = node.value
    if isinstance(value, ast.Call):
        found.calls.append((".".join(target), value))
    elif isinstance(value, (ast.Attribute, ast.Name)):
        found.assigns.append((".".join(target), value))


_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.Constant, ast.Name)
"""Nodes that hold no reference the verifier reads on their own (a Name is read as the root of its chain)."""


def _walk(tree: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk` without the leaves (`_LEAVES`): a third less time, where this walk is the verifier's main cost."""
    stack = [tree]
    pop, push, extend, node_type = stack.pop, stack.append, stack.extend, ast.AST
    while stack:
        node = pop()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                extend([item for item in value if isinstance(item, node_type) and not isinstance(item, _LEAVES)])
            elif isinstance(value, node_type) and not isinstance(value, _LEAVES):
                push(value)


def _collect(tree: ast.AST) -> _Module:
    found = _Module()
    inner: set[int] = set()  # Attribute chains inside an outer chain: resolved with it
    for node in _walk(tree):
        if isinstance(node, ast.Attribute):
            if id(node) not in inner:
                found.chains.append(node)
            inner.add(id(node.value))
        elif isinstance(node, ast.stmt):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                _collect_import(node, found)
            elif isinstance(node, ast.Assign):
                _collect_assign(node, found)
            elif isinstance(node, ast.Try):
                found.guarded.extend(_guarded_spans(node))
            if not hasattr(node, "body"):
                found.statements.append((node.lineno, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Call):
            found.calls.append(("", node))
    _collect_calls(found)
    return found


def _collect_calls(found: _Module) -> None:
    """Reads the calls `_collect` kept, once every import is known: imports by name and `getattr(x, "b")`."""
    importers = _importers(found)
    for target, node in found.calls:
        literal = _import_module_arg(node, importers)
        if target:  # `name = import_module("a.b")`; the call itself is seen again on its own
            if literal is not None:
                found.aliases.setdefault(target, set()).add(literal)
        elif literal is not None:
            found.refs.append((node, literal))
        elif isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) == 2:
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                found.chains.append(node)


def _resolve(parts: list[str], aliases: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(full name, the alias's own full name) of each name the dotted `parts` may stand for, through the longest
    aliased prefix (one or two parts)."""
    for size in (2, 1):
        if len(parts) >= size:
            local = ".".join(parts[:size])
            if local in aliases:
                rest = ".".join(parts[size:])
                return [(f"{full}.{rest}" if rest else full, full) for full in aliases[local]]
    return []


def _resolve_assigns(found: _Module) -> None:
    """Adds `name = a.b.c` and `self.x = a.b.c` aliases of watched modules, up to three deep (chained aliases)."""
    for _ in range(3):
        for local, value in found.assigns:
            parts = _dotted(value)
            names = {_normal(full) for full, _ in _resolve(parts, found.aliases)} if parts else set()
            names = {name for name in names if _target_names.watched(name)}
            if names - found.aliases.get(local, set()):
                found.aliases.setdefault(local, set()).update(names)


def references(tree: ast.AST) -> list[tuple[int, int, int, int, str, str]]:
    """(line, its statement's first line, last line, column, full name, the full name of the alias it is reached
    through or "") of every watched name `tree` references outside a version guard."""
    found = _collect(tree)
    _resolve_assigns(found)
    out = []
    for node, name in found.refs:
        out.append((node, _normal(name), ""))
    for chain in found.chains:
        if isinstance(chain, ast.Call):  # getattr(x, "b")
            parts = _dotted(chain.args[0])
            suffix = "." + chain.args[1].value  # type: ignore[attr-defined]
        else:
            parts, suffix = _dotted(chain), ""
        for full, via in _resolve(parts, found.aliases) if parts else ():
            out.append((chain, _normal(full + suffix), _normal(via)))
    guarded = sorted(found.guarded)
    found.statements.sort()
    kept = []
    for node, name, via in out:
        line = node.lineno  # type: ignore[attr-defined]
        if not _target_names.watched(name) or any(start <= line <= end for start, end in guarded):
            continue
        first = _statement_start(found.statements, line)
        kept.append((line, first, node.end_lineno or line, node.col_offset, name, via))  # type: ignore[attr-defined]
    return kept


def _statement_start(statements: list[tuple[int, int]], line: int) -> int:
    """The first line of the simple statement holding `line`, or `line` itself (a compound statement's header)."""
    k = bisect.bisect_right(statements, (line, float("inf"))) - 1
    if k >= 0 and statements[k][0] <= line <= statements[k][1]:
        return statements[k][0]
    return line


def unwarned(tree: ast.AST, target: str, warned: set[int]) -> list[tuple[int, int, str, str, tuple[str, ...]]]:
    """(line, column, name, missing part, stacks lacking it) of each reference to a name `target` lacks with no
    warning on its lines (`warned`: lines of the output that carry a finding or a suppression comment); one per line
    and missing part."""
    out = []
    seen = set()
    for line, first, last, col, name, via in references(tree):
        lack = _target_names.lacking(target, name)
        if lack is None or any(at in warned for at in range(first, last + 1)):
            continue
        if via and _target_names.lacking(target, via):
            continue  # the alias's own binding fails first, and is checked where it is bound
        missing, stacks = lack
        if (line, missing) not in seen:
            seen.add((line, missing))
            out.append((line, col, name, missing, stacks))
    return sorted(out)
