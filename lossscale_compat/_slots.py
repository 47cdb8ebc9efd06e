"""TF 2.4's optimizer slots (`get_slot_names`, `get_slot`) over today's per-variable slot lists."""

from __future__ import annotations

from typing import Any

from lossscale_compat import _flavour

# (optimizer class name, TF 2.4 slot name) -> attribute that holds that slot, one entry per variable.
SLOT_ATTRIBUTES: dict[tuple[str, str], str] = {
    ("SGD", "momentum"): "momentums",
    ("Adam", "m"): "_momentums",
    ("Adam", "v"): "_velocities",
    ("Adam", "vhat"): "_velocity_hats",
    ("RMSprop", "rms"): "_velocities",
    ("RMSprop", "momentum"): "_momentums",
    ("RMSprop", "mg"): "_average_gradients",
    ("Adagrad", "accumulator"): "_accumulators",
}

# TF 2.4 created these slots only while this hyperparameter was non-zero; some of today's optimizers
# create them regardless (tf_keras's SGD keeps a momentum slot even with `momentum=0`).
SLOT_HYPERPARAMETERS: dict[tuple[str, str], str] = {
    ("SGD", "momentum"): "momentum",
    ("RMSprop", "momentum"): "momentum",
}


# The value a slot starts from when it is not 0: Adagrad's accumulator starts at its `initial_accumulator_value`.
SLOT_INITIAL_VALUES: dict[tuple[str, str], str] = {("Adagrad", "accumulator"): "initial_accumulator_value"}


def initial_slot_value(optimizer: Any, slot: str) -> float:
    """The value TF 2.4 slot `slot` of a built `optimizer` starts from."""
    for cls in type(optimizer).__mro__:
        hyperparameter = SLOT_INITIAL_VALUES.get((cls.__name__, slot))
        if hyperparameter is not None:
            return float(getattr(optimizer, hyperparameter))
    return 0.0


def _kept(optimizer: Any, name: str, slot: str, attribute: str) -> bool:
    hyperparameter = SLOT_HYPERPARAMETERS.get((name, slot))
    if hyperparameter is not None and not getattr(optimizer, hyperparameter, 0):
        return False
    return bool(getattr(optimizer, attribute, None))


def _attributes(optimizer: Any) -> dict[str, str]:
    """TF 2.4 slot name -> attribute, for the optimizer's class or the nearest known base class."""
    for cls in type(optimizer).__mro__:
        found = {
            slot: attr
            for (name, slot), attr in SLOT_ATTRIBUTES.items()
            if name == cls.__name__ and _kept(optimizer, name, slot, attr)
        }
        if found or any(name == cls.__name__ for name, _ in SLOT_ATTRIBUTES):
            return found
    return {}


def slot_lists_of_class(optimizer: Any) -> set[str]:
    """The attributes in which the optimizer's class keeps its slots, built or not."""
    for cls in type(optimizer).__mro__:
        found = {attr for (name, _), attr in SLOT_ATTRIBUTES.items() if name == cls.__name__}
        if found:
            return found
    return set()


def slot_names(optimizer: Any) -> list[str]:
    """The TF 2.4 names of the slots a built optimizer keeps."""
    if _flavour.is_legacy_keras_optimizer(optimizer):  # TF 2.4's OptimizerV2 names its own slots
        return list(optimizer.get_slot_names())
    return list(_attributes(optimizer))


def slotted_variable_count(optimizer: Any) -> int:
    """How many variables a built optimizer of today's keeps TF 2.4 slots for."""
    lists = [getattr(optimizer, attribute) for attribute in _attributes(optimizer).values()]
    return len(lists[0]) if lists else 0


def slot_variable(optimizer: Any, variable: Any, slot: str) -> Any:
    """The variable holding TF 2.4 slot `slot` of `variable`."""
    legacy = _flavour.is_legacy_keras_optimizer(optimizer)
    attribute = slot if legacy and slot in slot_names(optimizer) else _attributes(optimizer).get(slot)
    if attribute is None:
        raise KeyError(
            f"{type(optimizer).__name__} has no slot {slot!r} (TF 2.4's name). Its slots are "
            f"{slot_names(optimizer)}; slots exist once the optimizer is built."
        )
    if legacy:
        return optimizer.get_slot(variable, slot)
    return getattr(optimizer, attribute)[_flavour.optimizer_variable_index(optimizer, variable)]


def tf24_weights(optimizer: Any) -> list[Any]:
    """TF 2.4's `optimizer.weights`: `iterations`, then each slot kind for every variable in turn."""
    return [optimizer.iterations] + [
        slot for attribute in _attributes(optimizer).values() for slot in getattr(optimizer, attribute)
    ]
