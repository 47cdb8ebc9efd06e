"""Modules import each other one way, TYPE_CHECKING imports included.

The package: _flavour at the bottom, legacy mode at the top. The codemod (the `codemods/` folder, installed as
`lossscale_compat.codemods`): cli -> engine -> command -> rules and the applier -> facts -> helpers.
"""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "lossscale_compat"
CODEMODS = REPO / "codemods"
# Where each module's source lives: the codemod folder installs as `lossscale_compat.codemods`.
ROOTS = {"lossscale_compat": PACKAGE, "lossscale_compat.codemods": CODEMODS}

# The codemod's layers, top first: a module imports only from its own layer or the ones below it.
CODEMOD_LAYERS = {
    "cli": {"cli", "_cli_options"},
    "engine": {"_engine", "_notebook"},
    "command": {"migrate_loss_scale", "_decide", "_blockers"},
    "rules and the applier": {
        "_apply",
        "_import_plan",
        "_node_plan",
        "rules",
        "rules.config_compare",
        "rules.custom_loop",
        "rules.graph_rewrite",
        "rules.keras3_notes",
        "rules.legacy_optimizers",
        "rules.loss_scale",
        "rules.optimizer",
        "rules.optimizer_class",
        "rules.policy",
        "rules.private_modules",
        "rules.rename",
        "rules.site",
        "rules.tf1",
        "rules.tf24_calls",
    },
    "facts": {"_scan", "_tf1", "_scopes", "_scope_lookup", "_facts"},
    "helpers": {
        "_edits",
        "_prefilter",
        "_libcst_internals",
        "_values",
        "_fields",
        "_positions",
        "_imports",
        "_warnings",
        "_linediff",
        "_doctable",
        "_files",
        "_write",
        "_annotate",
        "_isolate",
        "_output",
        "_verify_names",
        "_target_names",
    },
}
CODEMOD_ORDER = list(CODEMOD_LAYERS)


def source_of(name):
    """The file of module `name`, or None when it is not one of ours."""
    for package, folder in sorted(ROOTS.items(), key=lambda item: -len(item[0])):
        if name == package:
            return folder / "__init__.py"
        if name.startswith(package + "."):
            relative = folder.joinpath(*name[len(package) + 1 :].split("."))
            candidates = [relative.with_suffix(".py"), relative / "__init__.py"]
            return next((candidate for candidate in candidates if candidate.exists()), None)
    return None


def is_module(name):
    return source_of(name) is not None


def module_name(path):
    for package, folder in sorted(ROOTS.items(), key=lambda item: -len(item[0])):
        if path.is_relative_to(folder):
            parts = path.relative_to(folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            return ".".join([package, *parts])
    raise ValueError(path)


def imports_of(path):
    """Modules of ours that `path` imports, anywhere in it (function-level and TYPE_CHECKING imports count too)."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if not module.startswith("lossscale_compat"):
                continue
            for alias in node.names:  # `from package import module` imports the module
                submodule = f"{module}.{alias.name}"
                found.add(submodule if is_module(submodule) else module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("lossscale_compat."))
    found.discard(here)
    return found


FILES = [*PACKAGE.rglob("*.py"), *CODEMODS.rglob("*.py")]
GRAPH = {module_name(path): imports_of(path) for path in FILES}
PACKAGES = {"lossscale_compat", "lossscale_compat.codemods"}


def cycle_from(start):
    """A path of imports from `start` back to itself, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for child in GRAPH.get(node, ()):
            if child == start:
                return path + [child]
            if child not in seen and child not in PACKAGES:
                seen.add(child)
                stack.append((child, path + [child]))
    return None


def layer_of(name):
    """The index of the codemod layer that module `name` is in (0 is the top), or None for other modules."""
    short = name.removeprefix("lossscale_compat.codemods.")
    for index, layer in enumerate(CODEMOD_ORDER):
        if short in CODEMOD_LAYERS[layer]:
            return index
    return None


def upward_imports():
    """(module, import) pairs where a codemod module imports from a layer above its own."""
    return sorted(
        (name, imported)
        for name, imports in GRAPH.items()
        if (mine := layer_of(name)) is not None
        for imported in imports
        if (theirs := layer_of(imported)) is not None and theirs < mine
    )


def test_flavour_imports_nothing_of_ours_but_the_table_of_stacks():
    assert GRAPH["lossscale_compat._flavour"] == {"lossscale_compat._stacks"}
    assert GRAPH["lossscale_compat._stacks"] == set()


def test_no_module_imports_itself_through_others():
    cycles = [cycle for cycle in map(cycle_from, GRAPH) if cycle]
    assert cycles == []


# Above legacy mode: the package, and the run-time fallbacks that migrated code calls, built from legacy mode's pieces.
# `record --legacy` turns legacy mode on, as `run` does, through its public face.
ABOVE_LEGACY_MODE = {"lossscale_compat", "lossscale_compat._runtime", "lossscale_compat._trace"}


def test_the_classes_never_import_legacy_mode():
    below = [name for name in GRAPH if not name.startswith("lossscale_compat.legacy") and name not in ABOVE_LEGACY_MODE]
    assert [name for name in below if any(m.startswith("lossscale_compat.legacy") for m in GRAPH[name])] == []


def test_legacy_mode_is_reached_only_through_its_public_face():
    outside = [name for name in GRAPH if not name.startswith("lossscale_compat.legacy")]
    private = {name: [m for m in GRAPH[name] if m.startswith("lossscale_compat.legacy.")] for name in outside}
    assert {name: modules for name, modules in private.items() if modules} == {}


def test_legacy_modes_public_face_lists_what_it_serves():
    pytest.importorskip("tensorflow", reason="legacy mode's pieces need TensorFlow (the codemod-libcst session has none)")
    import lossscale_compat.legacy as legacy

    assert all(getattr(legacy, name) is not None for name in legacy.__all__)


def test_the_package_never_imports_the_codemod():
    package = [name for name in GRAPH if not name.startswith("lossscale_compat.codemods")]
    assert [name for name in package if any(m.startswith("lossscale_compat.codemods") for m in GRAPH[name])] == []


def test_every_codemod_module_has_a_layer():
    codemod = {name for name in GRAPH if name.startswith("lossscale_compat.codemods.")}
    assert sorted(name for name in codemod if layer_of(name) is None) == []


def test_codemod_layers_import_only_downward():
    assert upward_imports() == []


def test_relative_imports_are_read():
    assert "lossscale_compat.codemods._warnings" in GRAPH["lossscale_compat.codemods.rules.policy"]
    assert "lossscale_compat._mapping" in GRAPH["lossscale_compat.codemods.rules.policy"]


def test_the_layer_check_finds_an_upward_import():
    name = "lossscale_compat.codemods._values"
    GRAPH[name] = GRAPH[name] | {"lossscale_compat.codemods.migrate_loss_scale"}
    try:
        assert (name, "lossscale_compat.codemods.migrate_loss_scale") in upward_imports()
    finally:
        GRAPH[name] = imports_of(CODEMODS / "_values.py")


def test_the_check_finds_a_cycle_when_there_is_one():
    GRAPH["lossscale_compat._slots"] = GRAPH["lossscale_compat._slots"] | {"lossscale_compat._optimizer"}
    try:
        cycle = cycle_from("lossscale_compat._slots")
        assert cycle is not None and cycle[:2] == ["lossscale_compat._slots", "lossscale_compat._optimizer"]
        assert cycle[-1] == "lossscale_compat._slots"
        assert all(b in GRAPH[a] for a, b in zip(cycle, cycle[1:])), "each step is an import"
    finally:
        GRAPH["lossscale_compat._slots"] = imports_of(PACKAGE / "_slots.py")


def test_no_module_is_over_720_lines():
    """A module a newcomer reads in one sitting (issue #32)."""
    sizes = {
        str(path.relative_to(REPO)): len(path.read_text().splitlines())
        for root in ROOTS.values()
        for path in root.rglob("*.py")
    }
    assert {path: lines for path, lines in sizes.items() if lines > 720} == {}


# The one module that says which class an optimizer construction becomes (issue #32).
VERDICT_OWNER = "rules/optimizer_class.py"
OUR_LOOP_CLASS = "lossscale_compat.KerasLossScaleOptimizer"


def class_verdicts(source):
    """Where `source` gives an optimizer-class verdict itself: builds a `ShimWrap`, names our loop class, or defines
    `SHIM_INSTEAD` (line numbers)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ShimWrap":
            found.append(node.lineno)
        elif isinstance(node, ast.Constant) and node.value == OUR_LOOP_CLASS:
            found.append(node.lineno)
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "SHIM_INSTEAD" for target in node.targets
        ):
            found.append(node.lineno)
    return sorted(found)


def test_only_the_owner_module_gives_the_optimizer_class_verdict():
    others = {
        str(path.relative_to(CODEMODS)): lines
        for path in CODEMODS.rglob("*.py")
        if str(path.relative_to(CODEMODS)) != VERDICT_OWNER and (lines := class_verdicts(path.read_text()))
    }
    assert others == {}
    assert class_verdicts((CODEMODS / VERDICT_OWNER).read_text()), "the owner gives the verdict"


def test_the_verdict_check_finds_a_rule_that_decides_for_itself():
    source = f"edit = ShimWrap(wrap, note)\nname = {OUR_LOOP_CLASS!r}\nSHIM_INSTEAD = frozenset()\n"
    assert class_verdicts(source) == [1, 2, 3]


def test_the_applier_imports_no_rule():
    """The applier applies what the rules decided; it asks no rule (issue #32)."""
    imported = GRAPH["lossscale_compat.codemods._apply"]
    assert sorted(m for m in imported if m.startswith("lossscale_compat.codemods.rules")) == []


def test_the_passes_are_declared_with_the_facts_they_read():
    """The command runs one declared, ordered list of passes, each naming `Facts` fields (issue #32)."""
    pytest.importorskip("libcst")
    import dataclasses

    from lossscale_compat.codemods import migrate_loss_scale
    from lossscale_compat.codemods._facts import Facts

    fields = {field.name for field in dataclasses.fields(Facts)}
    passes = migrate_loss_scale.PASSES
    assert len({step.name for step in passes}) == len(passes), "each pass has its own name"
    assert {step.name: sorted(set(step.reads) - fields) for step in passes if set(step.reads) - fields} == {}
    names = [step.name for step in passes]
    assert names.index("checkpointed optimizers on our class") < names.index("site edits"), "decisions are final"


def _calls_named(source, name):
    """Line numbers of the calls of `name` (as `name(...)` or `x.name(...)`) in `source`."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
    )


def test_the_site_edits_are_planned_once():
    """One call plans the node edits of every decided site edit (issue #32: it ran twice, on one shared plan)."""
    calls = {
        str(path.relative_to(CODEMODS)): lines
        for path in CODEMODS.rglob("*.py")
        if (lines := _calls_named(path.read_text(), "plan_site_edits"))
    }
    assert list(calls) == ["migrate_loss_scale.py"] and len(calls["migrate_loss_scale.py"]) == 1, calls


def _catches(source, name):
    """Line numbers of the `except` clauses of `source` that catch `name`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if any(getattr(c, "id", None) == name or getattr(c, "attr", None) == name for c in caught):
                found.append(node.lineno)
    return found


def test_the_applier_refuses_nothing():
    """A refusal (`Unsafe`) is planned as a warning by planning; the applier never sees one (issue #32)."""
    source = (CODEMODS / "_apply.py").read_text()
    assert _catches(source, "Unsafe") == []
    assert "Unsafe" not in {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}
    assert _catches("try:\n    f()\nexcept (KeyError, Unsafe):\n    pass\n", "Unsafe") == [3], "the check finds one"


def test_plans_are_frozen_and_of_read_only_containers():
    """A plan is a frozen value; a rule's plan cannot be written by another (issue #32)."""
    pytest.importorskip("libcst")
    import dataclasses
    import types

    import libcst as cst
    from lossscale_compat.codemods._edits import Plan, merged

    name = cst.Name("x")
    plan = Plan(replace={name: cst.Name("y")}, drop_small={name}, warnings=[(name, "LSC110")])
    assert dataclasses.fields(Plan) and Plan.__dataclass_params__.frozen
    assert isinstance(plan.replace, types.MappingProxyType) and isinstance(plan.import_actions, types.MappingProxyType)
    assert isinstance(plan.drop_small, frozenset) and isinstance(plan.warnings, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.warnings = ()
    with pytest.raises(TypeError):
        plan.replace[name] = cst.Name("z")  # type: ignore[index]
    assert not hasattr(plan, "warn") and not hasattr(plan, "add"), "a plan is not written, parts are merged"
    later = Plan(replace={name: cst.Name("z")})
    both = merged([plan, later])
    assert both.replace[name].value == "z" and both.warnings == plan.warnings and plan.replace[name].value == "y"


def test_new_names_are_spelled_from_the_import_planning_result():
    """`_import_plan.spell` takes `plan_imports`' result as an argument: it cannot run before it (issue #32)."""
    pytest.importorskip("libcst")
    import inspect

    from lossscale_compat.codemods import _import_plan

    assert inspect.signature(_import_plan.plan_imports).return_annotation == "Imports"
    assert "Imports" in {p.annotation for p in inspect.signature(_import_plan.spell).parameters.values()}


def test_each_pass_takes_only_earlier_results_and_the_run_is_frozen():
    """Each pass names the earlier passes whose results it takes, and nothing the passes share grows (issue #32)."""
    pytest.importorskip("libcst")
    from lossscale_compat.codemods import migrate_loss_scale

    names = [step.name for step in migrate_loss_scale.PASSES]
    later = {
        step.name: [used for used in step.uses if used not in names[:i]]
        for i, step in enumerate(migrate_loss_scale.PASSES)
    }
    assert {name: used for name, used in later.items() if used} == {}
    by_name = {step.name: step for step in migrate_loss_scale.PASSES}
    spelling = ("private modules", "site edits", "custom loops")
    assert {name: "imports" in by_name[name].uses for name in spelling} == dict.fromkeys(spelling, True)
    assert migrate_loss_scale.Run.__dataclass_params__.frozen
    assert names.index("imports") < names.index("site edits") < names.index("custom loops")
