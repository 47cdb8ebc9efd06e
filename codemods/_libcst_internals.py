"""The libcst names we use that libcst does not publish, all here, each with the reason we need it.

libcst may change any of them in a release: pyproject caps libcst at the newest release CI has tested, and the
`codemod-libcst` nox session runs the codemod tests on the oldest release allowed and on the newest one out.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

import libcst as cst

# The state libcst's print writes its tokens into. `_positions` subclasses it for two things libcst's public print
# cannot do: print without the context manager made per node for positions nobody asks for (a third of the print's
# time), and note where the few nodes a finding points at start, in the one print the engine needs anyway.
from libcst._nodes.internal import CodegenState
from libcst.codemod import Codemod
from libcst.metadata import MetadataWrapper

__all__ = ["CodegenState", "ResolveWithoutCopy", "codegen", "visit_children"]


def codegen(node: cst.CSTNode, state: CodegenState) -> None:
    """Prints `node` into `state`: `Module.code` makes its own state, so it can be neither of ours."""
    node._codegen(state)


def visit_children(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """Visits the children of `node` with `visitor`: the only way to learn the order libcst visits a node's fields
    in, which `_fields` records once per node class so that our read-only walk meets nodes in libcst's order."""
    node._visit_and_replace_children(visitor)


class ResolveWithoutCopy(Codemod):
    """Resolves a module's metadata as `Codemod` does, without the deep copy of the module it makes first.

    `Codemod.transform_module` calls `_handle_metadata_reference` around the transform; libcst's copies the module
    so that the caller's tree is safe from metadata, but the engine parses a fresh module per file, so the copy
    (about as costly as the parse) buys nothing.
    """

    @contextlib.contextmanager
    def _handle_metadata_reference(self, module: cst.Module) -> Iterator[cst.Module]:
        previous = self.context.wrapper
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        with self.resolve(wrapper):
            self.context = dataclasses.replace(self.context, wrapper=wrapper)
            try:
                yield wrapper.module
            finally:
                self.context = dataclasses.replace(self.context, wrapper=previous)
