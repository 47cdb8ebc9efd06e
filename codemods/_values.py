"""Reading values from the source and building the nodes that replace them: what every rule shares."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

import libcst as cst

from lossscale_compat import _mapping

from . import _warnings as w

Expr = cst.BaseExpression


class Unsafe(Exception):
    """Raised inside the analysis when a site must be left alone with a warning code."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


# A loss scale read from the source: the modern arguments, as the source expressions that give them.
SourceScale = _mapping.ModernScale[Expr]


def called_name_of(call: cst.Call) -> str | None:
    """The last name of what `call` calls (`clip_by_norm` in `tf.clip_by_norm(...)`), else None."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


class _Calls(cst.CSTVisitor):
    """Collects the calls in a subtree, and whether it adds anything (`a + b`, `a += b`)."""

    def __init__(self) -> None:
        self.found: list[cst.Call] = []
        self.adds = False

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.adds = self.adds or isinstance(node.operator, cst.Add)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.adds = self.adds or isinstance(node.operator, cst.AddAssign)


def calls_in(node: cst.CSTNode) -> _Calls:
    collector = _Calls()
    node.visit(collector)
    return collector


def root_of(node: cst.CSTNode) -> cst.CSTNode:
    """The leftmost name of a dotted expression (`tf` in `tf.keras.X`)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node


def number_value(node: Expr) -> float | None:
    """Returns the value of an int/float literal, else None."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value)
    return None


def string_value(node: Expr) -> str | None:
    """Returns the value of a plain string literal, else None."""
    if isinstance(node, cst.SimpleString) and "f" not in node.prefix.lower():
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def is_pure(node: Expr) -> bool:
    """Returns whether `node` can be moved without changing when anything runs."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)):
        return True
    if isinstance(node, cst.Attribute):
        return is_pure(node.value)
    if isinstance(node, cst.UnaryOperation):
        return is_pure(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return is_pure(node.left) and is_pure(node.right)
    return False


def bind_args(args: Sequence[cst.Arg], params: Sequence[str], required: int) -> dict[str, cst.Arg]:
    """Binds call arguments to parameter names like Python would, or raises Unsafe."""
    bound: dict[str, cst.Arg] = {}
    for index, arg in enumerate(args):
        if arg.star:
            raise Unsafe(w.STAR_ARGS)
        if arg.keyword is None:
            if index >= len(params):
                raise Unsafe(w.BAD_ARGUMENTS)
            bound[params[index]] = arg
    for arg in args:
        if arg.keyword is not None:
            name = arg.keyword.value
            if name not in params or name in bound:
                raise Unsafe(w.BAD_ARGUMENTS)
            bound[name] = arg
    if any(name not in bound for name in params[:required]):
        raise Unsafe(w.BAD_ARGUMENTS)
    return bound


def kwarg(name: str, value: Expr) -> cst.Arg:
    """Returns `name=value` as a call argument."""
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def restyle(original: Sequence[cst.Arg], new: list[cst.Arg]) -> list[cst.Arg]:
    """Gives `new` the comma layout of `original`: its separator, and its trailing comma if any."""
    if not new:
        return new
    separator = original[0].comma if len(original) > 1 else cst.MaybeSentinel.DEFAULT
    trailing = original[-1].comma if original else cst.MaybeSentinel.DEFAULT
    out = [arg.with_changes(comma=separator) for arg in new[:-1]]
    out.append(new[-1].with_changes(comma=trailing))
    if original and not has_comment(original[-1].whitespace_after_arg):
        # The space before the closing paren (a newline, if it sat on its own line) stays last.
        closing = original[-1].whitespace_after_arg
        out = [
            arg.with_changes(whitespace_after_arg=cst.SimpleWhitespace(""))
            if arg.whitespace_after_arg is closing
            else arg
            for arg in out[:-1]
        ] + [out[-1].with_changes(whitespace_after_arg=closing)]
    return out


def full_name(node: cst.CSTNode | str) -> str | None:
    """libcst's `get_full_name_for_node` (`a.b.c` for a name, attribute, call, subscript, def, class or
    decorator, else None), by exact type: `isinstance` against libcst's abstract node classes is slow."""
    kind = type(node)
    if kind is cst.Name:
        return cast(cst.Name, node).value
    if isinstance(node, str):
        return node
    if kind is cst.Attribute:
        return f"{full_name(cast(cst.Attribute, node).value)}.{cast(cst.Attribute, node).attr.value}"
    if kind is cst.Call:
        return full_name(cast(cst.Call, node).func)
    if kind is cst.Subscript:
        return full_name(cast(cst.Subscript, node).value)
    if kind is cst.FunctionDef or kind is cst.ClassDef:
        return full_name(cast(cst.FunctionDef, node).name)
    if kind is cst.Decorator:
        return full_name(cast(cst.Decorator, node).decorator)
    return None


class _CommentFinder(cst.CSTVisitor):
    found = False

    def visit_Comment(self, node: cst.Comment) -> None:
        self.found = True


def has_comment(node: cst.CSTNode) -> bool:
    """Returns whether a comment sits anywhere inside `node`."""
    finder = _CommentFinder()
    node.visit(finder)
    return finder.found


def is_power_of_two(node: Expr | None) -> bool:
    """Returns whether `node` is a number literal that carries over exactly to Keras 3's `loss_scale_factor`."""
    return node is not None and _mapping.is_exact_loss_scale_factor(number_value(node))


def dotted_expression(dotted: str) -> Expr:
    """`a.b.c` as an expression, built directly (libcst's parser costs far more per call)."""
    parts = dotted.split(".")
    if not all(part.isidentifier() for part in parts):
        return cst.parse_expression(dotted)
    node: Expr = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def dotted_prefixes(node: Expr) -> list[Expr]:
    """Returns the dotted-name prefixes of `node`, longest first, down to its root Name."""
    out = [node]
    while isinstance(out[-1], cst.Attribute):
        out.append(out[-1].value)
    return [prefix for prefix in out if isinstance(prefix, (cst.Name, cst.Attribute))]


def restyle_aliases(original: Sequence[cst.ImportAlias], new: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    separator = original[0].comma if len(original) > 1 else cst.MaybeSentinel.DEFAULT
    trailing = original[-1].comma
    out = [alias.with_changes(comma=separator) for alias in new[:-1]]
    out.append(new[-1].with_changes(comma=trailing))
    return out


def optimizer_like(node: cst.BaseExpression) -> bool:
    """Whether a receiver's last name reads as an optimizer (`opt`, `optimizer`, `self.model_optimizer`)."""
    name = node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", "")
    if not isinstance(name, str):
        return False
    name = name.lower()
    return name in ("opt", "optimizer") or name.endswith(("_opt", "_optimizer"))


def named_prefixes(node: cst.Attribute | cst.Name) -> Iterator[tuple[str, cst.Attribute | cst.Name]]:
    """`a.b.c` -> ("a.b.c", node), ("a.b", ...), ("a", ...); through a call, from the called name."""
    if isinstance(node, cst.Name):
        yield node.value, node
        return
    value = node.value
    if isinstance(value, cst.Call) and isinstance(value.func, (cst.Attribute, cst.Name)):
        yield from named_prefixes(value.func)
    elif isinstance(value, (cst.Attribute, cst.Name)):
        inner = list(named_prefixes(value))
        if inner:
            yield f"{inner[0][0]}.{node.attr.value}", node
            yield from inner
