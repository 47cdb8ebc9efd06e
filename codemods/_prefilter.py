"""The one answer to "may this file hold anything the codemod rewrites or warns about?", from the mapping table.

Three tests, cheapest first, each an over-approximation (it only ever says no for a file the full transform
leaves unchanged and unwarned): `may_match` on the bytes; `surely_matches`, a TF 2.4 name on a line of code,
which lets a file skip the third; and `may_match_ast`, which resolves dotted names through the imports. The
words and names each looks for come from `lossscale_compat._mapping`, so a new row needs no change here.
"""

from __future__ import annotations

import ast
import re

from lossscale_compat import _mapping

LEGACY_NAMES = frozenset(_mapping.BY_OLD_NAME) | frozenset(_mapping.LEGACY_MODULES)
"""Every dotted name that resolves to TF 2.4's API: the table's names and the modules only TF 2.4 had."""

# Each TF 2.4 name, and so each file that spells one, holds a word of each group (bytes, case-sensitive):
# TensorFlow's root, a namespace TF 2.4 had (experimental, or TF1's compat), and the mixed-precision or loss-scale
# word of the name itself. `test_prefilter` checks every name of the table against them.
WORD_GROUPS: tuple[tuple[bytes, ...], ...] = (
    (b"tensorflow",),
    (b"experimental", b"compat"),
    (b"mixed_precision", b"LossScale"),
)
LOOP_METHODS = tuple(method.encode() for method in _mapping.LOOP_METHODS)
"""Custom-loop calls that Keras 3 rewrites, on any receiver."""
PRIVATE_ROOT = _mapping.PRIVATE_KERAS_ROOT.encode()
"""TF's private Keras mixed-precision package, which TF 2.4's own modules spell with no TF 2.4 namespace word."""


def _private_words() -> tuple[tuple[bytes, ...], ...]:
    """For each private module of `_mapping.PRIVATE_NAMES` outside TF's private Keras package, the words every file
    that needs a rewrite of it spells: its own last two (`mixed_precision`, `loss_scale_optimizer`: any import or
    chain of it), or for a module the targets still have only the name it lacks (`get_loss_scale_weights`)."""
    words: set[tuple[bytes, ...]] = set()
    for name in _mapping.PRIVATE_NAMES:
        module, _, last = name.rpartition(".")
        if (module + ".").startswith(_mapping.PRIVATE_KERAS_ROOT + "."):
            continue  # `PRIVATE_ROOT`
        kept = module in _mapping.PRIVATE_MODULES_KEPT
        words.add((last.encode(),) if kept else tuple(part.encode() for part in module.split(".")[-2:]))
    return tuple(sorted(words))


PRIVATE_WORDS = _private_words()
"""The other private modules' words: standalone Keras 2's `keras.mixed_precision.loss_scale_optimizer`, TF 2.3's
`get_loss_scale_weights`."""
CONFIG_WORDS = (
    _mapping.CONFIG_METHOD.encode(),
    tuple(sorted({name.rpartition(".")[2].encode() for name in _mapping.LOSS_SCALE_OPTIMIZER_CLASSES})),
)
"""A config comparison the codemod rewrites reads `get_config` of a name bound to a call of a loss-scale optimizer
class, on either target, also in a file with no TF 2.4 name: the method, and one of the classes' own names."""


def _sure_match() -> re.Pattern[bytes]:
    """A TF 2.4 namespace (`mixed_precision.experimental.`) or graph-rewrite call before any quote, backtick or `#`
    on its line: a TF 2.4 name in code, not a comment or most strings."""
    namespaces = {
        ".".join(module.split(".")[-2:]) for module in _mapping.LEGACY_MODULES if module in _mapping.PUBLIC_MODULES
    }
    calls = {rename.old.rpartition(".")[2] for rename in _mapping.RENAMES if rename.rule == "graph_rewrite"}
    words = [re.escape(name) + r"\." for name in sorted(namespaces)] + [re.escape(c) + r"\b" for c in sorted(calls)]
    return re.compile(rb"^[^#\"'`\n]*\b(?:" + "|".join(words).encode() + rb")", re.MULTILINE)


# Where the bytes show a sure match, the `ast` filter would all but always say yes, so it is skipped. Either way
# the result is the same: the filter only ever skips files the full transform leaves unchanged and unwarned.
SURE_MATCH = _sure_match()


def may_match(data: bytes, target: str = "keras3") -> bool:
    """Returns whether `data` could contain anything the codemod rewrites (cheap byte test)."""
    if all(any(word in data for word in group) for group in WORD_GROUPS):
        return True
    if PRIVATE_ROOT in data:
        return True  # TF's private Keras package: mapped names are moved to lossscale_compat, the rest warned
    if any(all(word in data for word in words) for words in PRIVATE_WORDS):
        return True  # another private module of `_mapping.PRIVATE_NAMES`
    method, classes = CONFIG_WORDS
    if method in data and any(name in data for name in classes):
        return True
    return _applies_on_kept_class(data, target) or (target == "keras3" and any(token in data for token in LOOP_METHODS))


APPLY_WORDS = (b"mixed_precision", b"LossScaleOptimizer", tuple(method.encode() for method in _mapping.APPLY_METHODS))
"""TF 2.4's non-experimental class keeps its name on both targets, and an `apply_gradients`/`get_gradients` on it may
need a warning (rules/tf24_calls.py): its module's word, the class's, and one of the methods."""


def _applies_on_kept_class(data: bytes, target: str) -> bool:
    """Also, on the tf_keras target, a `get_gradients` in a file whose loop shows a loss-scale optimizer."""
    module, cls, methods = APPLY_WORDS
    if module in data and cls in data and any(method in data for method in methods):
        return True
    return target != "keras3" and b"get_gradients" in data and any(token in data for token in LOOP_METHODS)


def surely_matches(data: bytes) -> bool:
    """Returns whether `data` shows a TF 2.4 name in code, so that the `ast` filter need not run (byte test)."""
    return SURE_MATCH.search(data) is not None


def _dotted(node: ast.expr) -> tuple[str | None, str]:
    """(root name, the rest of the dotted name) of an `ast` Name/Attribute chain; (None, "") otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, ".".join(reversed(parts))) if isinstance(node, ast.Name) else (None, "")


def may_match_ast(data: bytes, target: str = "keras3") -> bool:
    """Returns whether any dotted name could resolve to a TF 2.4 name (fast `ast` over-approximation).

    A file that does not parse with `ast` returns True, so that libcst reports the error.
    """
    if _applies_on_kept_class(data, target):
        return True
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return True
    return may_match_tree(tree, target)


def may_match_parsed(data: bytes, tree: ast.Module, target: str = "keras3") -> bool:
    """`may_match_ast` of a file already parsed into `tree`."""
    return _applies_on_kept_class(data, target) or may_match_tree(tree, target)


def may_match_tree(tree: ast.Module, target: str = "keras3") -> bool:
    """What `may_match_ast` reads from the tree (not the calls on TF 2.4's kept class, which its bytes show)."""
    read = _read_imports(tree, target)
    if read is None:
        return True  # TF 2.4's private package: mapped names are rewritten, the others warned
    imported, assigns, loops, configs = read
    _add_module_aliases(imported, assigns)
    roots = {local: full for local, full in imported.items() if any(f.startswith("tensorflow") for f in full)}
    if roots and _names_legacy(tree, roots):
        return True
    if configs and _calls_one_of(tree, imported, _mapping.LOSS_SCALE_OPTIMIZER_CLASSES):
        return True  # a regression test may compare two loss-scale optimizers' configs
    return loops and not _calls_one_of(tree, imported, _mapping.SHIM_OPTIMIZERS)


def _read_imports(
    tree: ast.AST, target: str
) -> tuple[dict[str, set[str]], list[tuple[ast.Name, ast.expr]], bool, bool] | None:
    """(What each imported local name stands for, the `name = a.b.c` assignments, whether a Keras 3 custom-loop
    call is made, whether `get_config` is read), or None when the module imports from TF 2.4's private Keras
    package or imports another private module of `_mapping.PRIVATE_NAMES`."""
    loops = False  # Keras 3: a TF 2.4 custom-loop call, which needs a look unless it runs on our shim
    configs = False  # a `get_config` read, which a regression test may compare
    imported: dict[str, set[str]] = {}
    assigns: list[tuple[ast.Name, ast.expr]] = []  # `name = a.b.c`: module aliases made by assignment
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            if (
                len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, (ast.Attribute, ast.Name))
            ):
                assigns.append((node.targets[0], node.value))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(_mapping.PRIVATE_KERAS_ROOT) or alias.name in _mapping.PRIVATE_MODULES:
                    return None
                local = alias.asname or alias.name.split(".")[0]
                imported.setdefault(local, set()).add(alias.name if alias.asname else local)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.startswith(_mapping.PRIVATE_KERAS_ROOT) or node.module in _mapping.PRIVATE_MODULES:
                return None
            for alias in node.names:
                if f"{node.module}.{alias.name}" in _mapping.PRIVATE_MODULES:
                    return None
                imported.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr == _mapping.CONFIG_METHOD:
            configs = True
        elif target == "keras3" and isinstance(node, ast.Attribute) and node.attr in _mapping.LOOP_METHODS:
            loops = True
    return imported, assigns, loops, configs


def _add_module_aliases(imported: dict[str, set[str]], assigns: list[tuple[ast.Name, ast.expr]]) -> None:
    """Adds to `imported` the module aliases made by assignment (`mp = tf.keras.mixed_precision`), up to 3 deep."""
    for _ in range(3):  # chained aliases (`mp = tf.keras.mixed_precision`, then `exp = mp.experimental`)
        for assigned, value in assigns:
            resolved = {
                f"{full}.{rest}" if rest else full
                for root, rest in [_dotted(value)]
                if root in imported
                for full in imported[root]
            }
            if resolved & _mapping.MODULE_PREFIXES:
                imported.setdefault(assigned.id, set()).update(resolved & _mapping.MODULE_PREFIXES)


def _names_legacy(tree: ast.AST, roots: dict[str, set[str]]) -> bool:
    """Whether a dotted name through one of `roots`, or an absolute import, names a TF 2.4 name."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            parts = []  # `_dotted`, inline: this loop meets every name of the module
            current: ast.expr = node
            while isinstance(current, ast.Attribute):
                parts.append(current.attr)
                current = current.value
            if not isinstance(current, ast.Name) or current.id not in roots:
                continue
            rest = ".".join(reversed(parts))
            for full in roots[current.id]:
                if _mapping.normal_name(f"{full}.{rest}" if rest else full) in LEGACY_NAMES:
                    return True
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if any(f"{node.module}.{alias.name}" in LEGACY_NAMES for alias in node.names):
                return True
        elif isinstance(node, ast.Import):
            if any(alias.name in LEGACY_NAMES for alias in node.names):
                return True
    return False


def _calls_one_of(tree: ast.AST, imported: dict[str, set[str]], classes: frozenset[str]) -> bool:
    """Whether the module calls one of `classes` (dotted names) through its imports.

    With `_mapping.SHIM_OPTIMIZERS`: the codemod leaves the loop calls of a module that builds lossscale_compat's
    optimizers alone (a second run over migrated code), so the `ast` filter may skip it when nothing else matches.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            root, rest = _dotted(node.func)
            if root in imported and any((f"{full}.{rest}" if rest else full) in classes for full in imported[root]):
                return True
    return False
