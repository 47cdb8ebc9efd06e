"""What a traced train step holds, op by op, the bodies of its nested functions included.

On a GPU each conditional or loop in a step costs a device-to-host sync (its predicate is read on the host), an op
without a GPU kernel runs on the CPU with copies either way, and a `py_function` runs Python on the host. This module
walks a step's `GraphDef` from its top-level ops through every function they call (`If`/`While` branches and bodies,
`PartitionedCall`/`StatefulPartitionedCall`), counting each call site, so a function called twice counts twice.

It reads only `GraphDef` protos: the recorder (tests/recorders/record_tf24_gpu_audit.py) loads this file by path on
TF 2.4.0 and Python 3.8. Only `ops_without_gpu_kernel` imports TensorFlow, to read the kernel registry.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

CONDITIONALS = frozenset({"If", "StatelessIf", "Case", "StatelessCase"})
LOOPS = frozenset({"While", "StatelessWhile"})
# TF1's control flow, which a `tf.function` never builds; a step holding it is reported, not counted as zero.
V1_CONTROL_FLOW = frozenset({"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"})
PYTHON_CALLS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
# Kernels registered for DEVICE_DEFAULT run on any device, a GPU included (function calls, control flow,
# placeholders, resource reads): TensorFlow registers them once for every device rather than once per device.
GPU_DEVICE_TYPES = ("GPU", "DEFAULT")


@dataclass
class StepAudit:
    """Counts over one traced step, each nested function counted at each of its call sites."""

    ops: int = 0
    conditionals: int = 0
    loops: int = 0
    python_calls: list = field(default_factory=list)  # where each py_function/numpy_function is
    v1_control_flow: list = field(default_factory=list)
    op_types: collections.Counter = field(default_factory=collections.Counter)

    @property
    def host_syncs(self) -> int:
        """Conditionals and loops: each reads a predicate on the host once per run on a GPU."""
        return self.conditionals + self.loops

    def summary(self) -> dict:
        return {"ops": self.ops, "conditionals": self.conditionals, "loops": self.loops}


def _called_functions(node: Any) -> Iterator[str]:
    """Names of the library functions `node` calls: function-valued attrs (branches, bodies, `f`)."""
    for key in sorted(node.attr):
        value = node.attr[key]
        if value.HasField("func"):
            yield value.func.name
        elif value.HasField("list"):
            yield from (function.name for function in value.list.func)


def walk(graph_def: Any) -> Iterator[tuple[Any, str]]:
    """Every node of `graph_def` and of the functions it calls, at each call site, with where it is."""
    library = {function.signature.name: function for function in graph_def.library.function}

    def visit(nodes: Any, where: str, calling: tuple) -> Iterator[tuple[Any, str]]:
        for node in nodes:
            yield node, where
            names = list(_called_functions(node))
            if node.op in library:  # a direct call of a library function, as gradient functions make
                names.append(node.op)
            for name in names:
                if name in library and name not in calling:
                    yield from visit(library[name].node_def, f"{where}/{node.name}:{name}", (*calling, name))

    yield from visit(graph_def.node, "", ())


def audit(graph_def: Any) -> StepAudit:
    """The op, conditional and loop counts of one step, and any py_function or TF1 control flow in it."""
    library = {function.signature.name for function in graph_def.library.function}
    result = StepAudit()
    for node, where in walk(graph_def):
        if node.op in library:
            continue  # the call, not an op: its body is walked
        result.ops += 1
        result.op_types[node.op] += 1
        if node.op in CONDITIONALS:
            result.conditionals += 1
        elif node.op in LOOPS:
            result.loops += 1
        elif node.op in PYTHON_CALLS:
            result.python_calls.append(f"{where}/{node.name} ({node.op})")
        elif node.op in V1_CONTROL_FLOW:
            result.v1_control_flow.append(f"{where}/{node.name} ({node.op})")
    return result


def _attr_types(node: Any, name: str, defaults: dict) -> list | None:
    """The dtype(s) of `node`'s type attr `name` (its op's default when unset), or None when it has none."""
    value = node.attr[name] if name in node.attr else defaults.get(name)
    if value is None:
        return None
    if value.HasField("list"):
        return list(value.list.type)
    return [value.type]


def _kernel_fits(kernel: Any, node: Any, defaults: dict) -> bool:
    for constraint in kernel.constraint:
        types = _attr_types(node, constraint.name, defaults)
        if types is None or any(t not in constraint.allowed_values.list.type for t in types):
            return False
    return True


def _typed_attrs(node: Any) -> dict:
    """`node`'s type and type-list attrs: {name: (dtype enum, ...)}."""
    found = {}
    for key, value in node.attr.items():
        if value.WhichOneof("value") == "type":
            found[key] = (value.type,)
        elif value.WhichOneof("value") == "list" and value.list.type:
            found[key] = tuple(value.list.type)
    return found


def ops_without_gpu_kernel(graph_def: Any) -> list[str]:
    """Each op (once per op type and dtypes) with no GPU or device-agnostic kernel for its dtypes, on this build."""
    from tensorflow.python.framework import dtypes, kernels, op_def_registry

    library = {function.signature.name for function in graph_def.library.function}
    missing, seen = [], set()
    for node, where in walk(graph_def):
        typed = _typed_attrs(node)
        key = (node.op, tuple(sorted(typed.items())))
        if node.op in library or key in seen:
            continue
        seen.add(key)
        op_def = op_def_registry.get(node.op)
        attrs = [] if op_def is None else op_def.attr
        defaults = {attr.name: attr.default_value for attr in attrs if attr.HasField("default_value")}
        registered = kernels.get_registered_kernels_for_op(node.op).kernel
        if not any(k.device_type in GPU_DEVICE_TYPES and _kernel_fits(k, node, defaults) for k in registered):
            named = {k: [dtypes.as_dtype(t).name for t in v] for k, v in sorted(typed.items())}
            missing.append(f"{where}/{node.name} ({node.op} {named})")
    return missing
