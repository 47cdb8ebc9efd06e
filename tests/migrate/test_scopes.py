"""Our scope analysis (`_scopes`) gives the answers libcst's ScopeProvider gives, for what the codemod asks."""

from __future__ import annotations

import glob
import os

import libcst as cst
import pytest
from libcst.metadata import Assignment, BuiltinAssignment, MetadataWrapper, ScopeProvider

from lossscale_compat.codemods import _scopes

from .test_scan_walk import SHAPES

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# What the corpus lacks: shadowing, global/nonlocal, class bodies, comprehensions, uses before a binding,
# dotted imports, string annotations and `typing`.
SCOPING = """\
import typing
from typing import cast, Optional
import tensorflow.compat.v1
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mp, experimental
from . import sibling
from .pkg import thing as other
x = tf.keras.mixed_precision.experimental.LossScaleOptimizer
print(x)
def f(opt, scale=x, *, tf=tf) -> "mp.LossScale":
    global x
    x = 1
    y: Optional["tf.Tensor"] = cast("mp.DynamicLossScale", None)
    def g():
        nonlocal y
        y = opt.get_scaled_loss(y)
        return y
    z = [opt for opt in range(3) if opt] + [tf for _ in ()]
    q = {k: v for k, v in z}
    opt = tensorflow.compat.v1.train.AdamOptimizer()
    float = 2
    return (w := float), typing.List["x"]
class C(tf.keras.Model, metaclass=type):
    opt = mp.LossScaleOptimizer
    ls = opt
    def m(self, opt=opt):
        return [opt, ls, self.opt, C.opt]
    lam = lambda a, b=opt: a + b
for i, j in zip(x, x):
    i = j
else:
    del i
with open("f") as fh, open("g"):
    pass
try:
    pass
except ValueError as err:
    print(err, sibling, other, experimental)
if __name__ == "__main__":
    print(float, f, C, typing.Any)
"""

CORPUS = sorted(
    glob.glob(os.path.join(REPO, "tests", "migrate", "corpus", "*.py"))
    + glob.glob(os.path.join(REPO, "tests", "migrate", "corpus_public", "*.py"))
    + glob.glob(os.path.join(REPO, "examples", "**", "*.py"), recursive=True)
)


def _describe(module: cst.Module) -> dict[str, object]:
    """Everything the codemod may ask of the scopes, from libcst's ScopeProvider and from ours, side by side."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    theirs = {node: scope for node, scope in wrapper.resolve(ScopeProvider).items() if scope is not None}
    ours = _scopes.scopes(module)
    ids: dict[int, int] = {}
    nodes = {id(node): n for n, node in enumerate(_all_nodes(module))}

    def node_id(node: object) -> object:
        return nodes.get(id(node), "string" if isinstance(node, cst.BaseString) else repr(node))

    out: dict[str, object] = {}
    for side, mapping in (("libcst", theirs), ("ours", ours)):
        scope_ids: dict[int, int] = {}
        asked = {}
        for node in _all_nodes(module):
            if not isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Assign, cst.Module, cst.Param)):
                continue
            scope = mapping.get(node)
            if scope is None:
                asked[node_id(node)] = None
                continue
            sid = scope_ids.setdefault(id(scope), len(scope_ids))
            entry: dict[str, object] = {"scope": sid, "kind": type(scope).__name__, "prefix": _prefix(scope)}
            if isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
                qualified = scope.get_qualified_names_for(node)
                entry["qualified"] = sorted((q.name, q.source.name) for q in qualified)
            if isinstance(node, (cst.Name, cst.Attribute)):
                name = cst.helpers.get_full_name_for_node(node)
                entry["in"] = name in scope
                seen = scope[name]
                entry["sees"] = sorted(_binding(b, node_id) for b in seen)
                uses = scope.accesses[name]
                entry["uses"] = sorted(
                    (node_id(a.node), sorted(_binding(b, node_id) for b in a.referents)) for a in uses
                )
                bound = scope.assignments[name]
                entry["bindings"] = sorted(
                    (_binding(b, node_id), sorted(node_id(a.node) for a in b.references)) for b in bound
                )
            asked[node_id(node)] = entry
        out[side] = asked
        ids.update(scope_ids)
    return out


def _prefix(scope: object) -> str:
    return getattr(scope, "_name_prefix", None) or getattr(scope, "name_prefix", "")


def _binding(binding: object, node_id) -> tuple:
    builtin = isinstance(binding, (BuiltinAssignment, _scopes.BuiltinBinding))
    assert builtin or isinstance(binding, (Assignment, _scopes.Binding))
    return (binding.name, "builtin" if builtin else node_id(binding.node), binding._index)


def _all_nodes(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            found.append(node)
            return True

    module.visit(Collect())
    return found


def _assert_same(code: str) -> None:
    described = _describe(cst.parse_module(code))
    theirs, ours = described["libcst"], described["ours"]
    assert theirs, "nothing compared"
    different = {key: (theirs[key], ours.get(key)) for key in theirs if theirs[key] != ours.get(key)}
    assert not different, f"{len(different)} of {len(theirs)} nodes differ, e.g. {next(iter(different.items()))}"


# A name bound again and again (an import in each notebook cell), and uses before, between and after the bindings of
# a function and of a class body, that fall back to the module's bindings (libcst records those uses on them).
REBOUND = (
    "".join(
        f"import tensorflow as tf\nopt{i} = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        for i in range(30)
    )
    + """\
def f():
    print(tf, opt1)
    import tensorflow as tf
    tf.keras
    opt1 = 2
    import tensorflow.compat.v1 as tf
    return tf, opt1
class C:
    a = tf
    tf = 1
    b = tf
    import tensorflow as tf
import tensorflow as tf
"""
)


@pytest.mark.parametrize("code", [SCOPING, SHAPES, REBOUND], ids=["scoping", "shapes", "rebound"])
def test_scopes_answer_as_libcst_does(code):
    _assert_same(code)


@pytest.mark.parametrize("path", CORPUS, ids=[os.path.relpath(p, REPO) for p in CORPUS])
def test_scopes_answer_as_libcst_does_on_the_corpus(path):
    with open(path, encoding="utf-8") as handle:
        _assert_same(handle.read())


def test_the_corpus_is_there():
    assert len(CORPUS) > 10


def test_a_bindings_uses_are_found_when_asked_first():
    """Uses are resolved on demand: asking a binding for its uses, before anything else, must find them."""
    module = cst.parse_module(SCOPING)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)[module]
    ours = _scopes.scopes(module)[module]
    assert theirs is not None
    for name in ("tf", "x", "C", "cast", "tensorflow.compat.v1"):
        expected = sorted(id(access.node) for a in theirs.assignments[name] for access in a.references)
        assert expected, name
        assert sorted(id(access.node) for a in ours.assignments[name] for access in a.references) == expected, name


def test_each_binding_of_a_name_bound_in_every_cell_is_read_once(monkeypatch):
    """Asking what each use of a name bound in every cell stands for reads each binding's names once, not once for
    every later use (quadratic: a notebook of 5,000 cells took 181 s, issue #46)."""
    cells = 300
    module = cst.parse_module(
        "".join(f"import tensorflow as tf\nopt{i} = tf.keras.mixed_precision.experimental\n" for i in range(cells))
    )
    scopes = _scopes.scopes(module)
    reads = []
    read = _scopes.Binding.own_qualified_names
    monkeypatch.setattr(_scopes.Binding, "own_qualified_names", lambda binding: reads.append(binding) or read(binding))
    uses = [node for node in scopes if isinstance(node, cst.Name) and node.value == "tf"]
    assert len(uses) == cells
    for node in uses:
        assert {q.name for q in scopes[node].get_qualified_names_for(node)} == {"tensorflow"}
    assert len(reads) == len(set(reads)) == cells


def test_a_migrated_tree_is_freed_without_the_cyclic_collector():
    """Scopes, bindings and uses point at each other; the command empties them, so the tree goes with its last
    reference rather than at the next run of the cyclic collector (a second at 20,000 sites)."""
    import gc

    from libcst.codemod import CodemodContext

    from lossscale_compat.codemods.migrate_loss_scale import MigrateLossScaleCommand

    gc.collect()
    module = cst.parse_module(SCOPING)
    command = MigrateLossScaleCommand(CodemodContext(), target="keras3")
    new = command.transform_module(module)
    assert new is not module  # the transform rewrote something
    del module, new, command
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        left_to_the_collector = [o for o in gc.garbage if isinstance(o, cst.CSTNode)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left_to_the_collector == []
