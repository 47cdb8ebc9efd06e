"""Restores a `tf.train.Checkpoint` written by TF 2.4 into a model and optimizer of any supported stack.

TF 2.4's Keras wrote models as `layer_with_weights-<i>/<attribute>`, optimizer state as `iter` and
hyperparameter variables, slots as `<variable>/.OPTIMIZER_SLOT/<optimizer>/<slot>`, and a loss
scale as `loss_scale/current_loss_scale` and `loss_scale/good_steps`. Keras 3 (and Keras 2's newer
optimizers) lay the same state out differently, so object-based restoring cannot match it; this
reads each TF 2.4 key and assigns it to the object that holds the same state today.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from lossscale_compat import _flavour, _optimizer_checkpoint, _slots

_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"


def restore_tf24_checkpoint(
    path: str, model: Any = None, optimizer: Any = None, *, model_key: str = "model", optimizer_key: str = "optimizer"
) -> list[str]:
    """Restores TF 2.4 checkpoint `path` into `model` and `optimizer`; returns the keys it restored.

    `model_key`/`optimizer_key` are the names the TF 2.4 code gave them in `tf.train.Checkpoint(...)`.
    The optimizer may be a `lossscale_compat` loss-scale optimizer or a plain Keras optimizer. All or
    nothing: every key, shape, dtype and slot is checked (and every value read) before anything is
    assigned; on any mismatch one ValueError lists them all and nothing is changed.
    """
    reader = tf.train.load_checkpoint(path)
    shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    keys = set(shapes)
    problems: list[str] = []
    variables_by_prefix = _model_variables(model, model_key, keys, problems) if model is not None else {}
    targets = [(prefix + _VALUE, variable) for prefix, variable in variables_by_prefix.items()]
    if optimizer is not None:
        targets += _optimizer_targets(optimizer, optimizer_key, keys, variables_by_prefix, problems)
    if not targets and not problems:
        raise _nothing_matched_error(path, keys, model_key, optimizer_key)
    for name, argument, given in (("model", model_key, model), ("optimizer", optimizer_key, optimizer)):
        if given is not None and not any(key.startswith(f"{argument}/") for key in keys):
            problems.append(
                f"{name}_key={argument!r} matches nothing: no key starts with {argument!r}/ (the checkpoint's "
                f"top-level names are {sorted({key.split('/', 1)[0] for key in keys})})"
            )
    values = {}
    for key, target in targets:
        problem = _mismatch(key, target, tuple(shapes[key]), dtypes[key])
        if problem is None:
            try:
                values[key] = reader.get_tensor(key)
            except Exception as error:  # noqa: BLE001 - a truncated or damaged file raises several kinds
                problem = f"{key!r} cannot be read ({type(error).__name__}: {_first_line(error)}): the file is damaged"
        if problem is None and isinstance(target, _Hyperparameter):
            problem = target.problem(values[key])
        if problem is not None:
            problems.append(problem)
    if problems:
        raise ValueError(
            f"Nothing was restored from {path}; {len(problems)} problem(s):\n  - "
            + "\n  - ".join(problems)
            + "\nBuild the model and optimizer exactly as the TF 2.4 code did (same layers, same optimizer class "
            "and settings), pass the names it used in `tf.train.Checkpoint(...)` as `model_key=`/`optimizer_key=`, "
            "and restore from an undamaged checkpoint."
        )
    for key, target in targets:
        target.assign(tf.cast(values[key], target.dtype))
    return [key for key, _ in targets]


class _Hyperparameter:
    """A TF 2.4 hyperparameter variable (`momentum`, `decay`, ...) that today's optimizer keeps as a float: restoring
    it sets the float, as TF 2.4's restore overrode the constructor's value."""

    shape = ()
    dtype = tf.float32

    def __init__(self, optimizer: Any, name: str) -> None:
        self._optimizer, self._name = optimizer, name
        self.name = f"{type(optimizer).__name__}.{name}"

    def problem(self, value: Any) -> str | None:
        found = _optimizer_checkpoint.tf24_hyperparameter_problem(self._optimizer, self._name, float(value))
        return None if found is None else f"the checkpoint holds TF 2.4 hyperparameter {found}"

    def assign(self, value: Any) -> None:
        _optimizer_checkpoint.set_tf24_hyperparameter(self._optimizer, self._name, float(value))


def _nothing_matched_error(path: str, keys: set, model_key: str, optimizer_key: str) -> ValueError:
    ours = sorted(key for key in keys if key.startswith((f"{model_key}/", f"{optimizer_key}/")))
    if ours:  # the names match, the layout is not TF 2.4's: a checkpoint of today's Keras (or of our class on it)
        return ValueError(
            f"Nothing in {path} matched, although {len(ours)} keys start with {model_key!r}/ or "
            f"{optimizer_key!r}/ (such as {ours[0]!r}): they are laid out as today's Keras writes them, not as "
            "TF 2.4 did. Restore a checkpoint written on this stack with "
            "`tf.train.Checkpoint(...).restore(path)`; `restore_tf24_checkpoint` reads TF 2.4's layout only."
        )
    return ValueError(
        f"Nothing in {path} matched: no keys start with {model_key!r}/ or "
        f"{optimizer_key!r}/. Pass the names the TF 2.4 code used in "
        "`tf.train.Checkpoint(...)` as `model_key=` and `optimizer_key=`."
    )


def _mismatch(key: str, target: Any, shape: tuple, dtype: Any) -> str | None:
    """Why the checkpoint's `key` (of `shape` and `dtype`) cannot be assigned to `target`; None if it can."""
    if tuple(target.shape) != shape:
        return f"{key!r} holds shape {shape}, but {target.name} has shape {tuple(target.shape)}"
    wanted = tf.as_dtype(target.dtype)
    if not (dtype.is_floating and wanted.is_floating) and not (dtype.is_integer and wanted.is_integer):
        return f"{key!r} holds {dtype.name}, but {target.name} is {wanted.name}"
    return None


def _first_line(error: object) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else ""


def _model_variables(model: Any, model_key: str, keys: set, problems: list[str]) -> dict[str, Any]:
    """Maps each TF 2.4 `layer_with_weights-<i>/<attribute>` prefix to today's variable."""
    layers = [layer for layer in model.layers if layer.weights]
    found: dict[str, Any] = {}
    for key in sorted(keys):
        if not key.startswith(f"{model_key}/layer_with_weights-") or not key.endswith(_VALUE):
            continue
        if ".OPTIMIZER_SLOT" in key:
            continue
        prefix = key[: -len(_VALUE)]
        index_text, attribute = prefix[len(f"{model_key}/layer_with_weights-") :].split("/", 1)
        index = int(index_text)
        if index >= len(layers) or not hasattr(layers[index], attribute):
            problems.append(
                f"{prefix!r} has no counterpart: the model's layer with weights number {index} "
                + ("does not exist" if index >= len(layers) else f"has no attribute {attribute!r}")
            )
            continue
        found[prefix] = getattr(layers[index], attribute)
    return found


def _optimizer_targets(
    optimizer: Any, optimizer_key: str, keys: set, variables_by_prefix: dict[str, Any], problems: list[str]
) -> list[tuple[str, Any]]:
    """The optimizer's (checkpoint key, variable) pairs; slots it does not keep are added to `problems`."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    if variables_by_prefix and not _flavour.optimizer_is_built(inner):
        _flavour.build_optimizer(optimizer, list(variables_by_prefix.values()))
    simple = {"iter": inner.iterations, **_flavour.tf24_hyperparameter_variables(inner)}
    state = _flavour.loss_scale_state_variables(optimizer)
    if state is not None:
        simple["loss_scale/current_loss_scale"], simple["loss_scale/good_steps"] = state
    targets = [
        (f"{optimizer_key}/{name}{_VALUE}", target)
        for name, target in simple.items()
        if f"{optimizer_key}/{name}{_VALUE}" in keys
    ]
    for key in sorted(keys):
        name = key[len(optimizer_key) + 1 : -len(_VALUE)] if key.startswith(f"{optimizer_key}/") else ""
        if key.endswith(_VALUE) and name not in simple and _optimizer_checkpoint.is_tf24_hyperparameter(name):
            targets.append((key, _Hyperparameter(inner, name)))
    for prefix, variable in variables_by_prefix.items():
        slot_prefix = f"{prefix}/.OPTIMIZER_SLOT/{optimizer_key}/"
        for key in sorted(k for k in keys if k.startswith(slot_prefix)):
            slot = key[len(slot_prefix) : -len(_VALUE)]
            try:
                targets.append((key, _slots.slot_variable(inner, variable, slot)))
            except (KeyError, ValueError, AttributeError, IndexError) as error:
                problems.append(
                    f"{key!r} is slot {slot!r}, which {type(inner).__name__} does not keep ({_first_line(error)})"
                )
    return targets
