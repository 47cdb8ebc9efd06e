"""The command's own walk meets the nodes in the order libcst's visit does, with the same parents."""

from __future__ import annotations

import glob
import os

import libcst as cst
import pytest

from lossscale_compat.codemods import _fields, _scan

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Node kinds whose fields libcst visits only when present (format specs, decorators, annotations,
# defaults, star targets...), in both shapes, so that the per-class field order is tested on each.
SHAPES = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision as mp
x = f"{a}" f"{b!r:>{width}.{p}}" f"{c=}"
@tf.function
@dec(1)
def f(a: int = 1, /, b: "str" = mp.experimental, *args: int, c, d=2, **kw) -> None:
    global g
    y = lambda q, *r, s=1, **t: (q, r)
    z = [i for i in range(3) if i if not i]
    w = {k: v for k, v in kw.items()}
    u = {i async for i in aiter()} if x else ()
    with open(a) as h, open(b): pass
    try:
        pass
    except (ValueError, TypeError) as e:
        raise RuntimeError() from e
    else:
        pass
    finally:
        del y[0], z
    try:
        pass
    except* OSError:
        pass
    match a:
        case [1, *rest] | {"k": _, **others} if rest:
            pass
        case tf.keras.X(p=1) as q:
            pass
    return (yield from g) if (n := len(a)) else mp.LossScaleOptimizer(opt, 'dynamic')[1:2, ::3]
class C(Base, metaclass=M):
    attr: int
    attr2: int = 3
    def m(self): return super().m()
def g[T: int, *Ts, **P](a: T) -> T: ...
type Alias[K] = list[K]
"""


class _Fake:
    def __init__(self) -> None:
        self._parents = {}
        self.aliases = []

    def _add_local_alias(self, node) -> None:
        self.aliases.append(node)


def _both(module: cst.Module):
    by_visit, by_walk = _Fake(), _Fake()
    visited = _scan._LocalAliasCollector(by_visit)
    module.visit(visited)
    walked = _scan._LocalAliasCollector(by_walk)
    walked.walk(module)
    return (by_visit, visited), (by_walk, walked)


def _sources():
    yield "shapes", SHAPES
    for path in sorted(glob.glob(os.path.join(REPO, "codemods", "*.py")))[:6]:
        with open(path, encoding="utf-8") as handle:
            yield os.path.relpath(path, REPO), handle.read()


@pytest.mark.parametrize("name, source", list(_sources()), ids=lambda value: value if len(value) < 60 else None)
def test_walk_matches_libcsts_visit(name, source):
    try:
        module = cst.parse_module(source, config=cst.PartialParserConfig(python_version="3.12"))
    except (cst.ParserSyntaxError, ValueError):
        pytest.skip(f"this libcst cannot parse the newest syntax in {name}")
    (visit_fake, visited), (walk_fake, walked) = _both(module)
    named = {node: parent for node, parent in visit_fake._parents.items() if not _fields.holds_no_name(node)}
    assert len(walk_fake._parents) == len(named) > 0
    assert all(walk_fake._parents.get(node) is parent for node, parent in named.items())
    assert [type(node).__name__ for node in walked.scanned] == [type(node).__name__ for node in visited.scanned]
    assert all(a is b for a, b in zip(walked.scanned, visited.scanned)) and walked.ends == visited.ends
    assert [id(node) for node in walk_fake.aliases] == [id(node) for node in visit_fake.aliases]
