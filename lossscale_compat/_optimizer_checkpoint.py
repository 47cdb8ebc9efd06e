"""How our loss-scale optimizers answer checkpoints: TF 2.4's names for their state, and the class mark.

TF 2.4 checkpointed a loss-scale optimizer as its inner optimizer's state under TF 2.4's names; `TF24CheckpointNames`
(a mixin of both optimizer classes) answers those names with today's variables. `restore_tf24_checkpoint`
(`_checkpoint`) reads a whole TF 2.4 checkpoint into a model and an optimizer instead.
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from lossscale_compat import _flavour, _inner_access, _slots

# TF 2.4 hyperparameters its optimizers checkpointed as variables. Today they are constructor
# arguments (plain attributes), so a TF 2.4 checkpoint's value is set on the inner optimizer instead.
_TF24_HYPERPARAMETERS = frozenset(
    {
        "decay",
        "momentum",
        "beta_1",
        "beta_2",
        "rho",
        "epsilon",
        "initial_accumulator_value",
        "learning_rate_power",
        "l1_regularization_strength",
        "l2_regularization_strength",
    }
)
# The value of a hyperparameter at which TF 2.4 behaved as an optimizer without that setting.
_NEUTRAL = {"decay": 0.0}


class _TF24Hyperparameter(_flavour.Trackable):
    """Takes a TF 2.4 checkpoint's value of one hyperparameter and sets it on today's optimizer, as TF 2.4 did.

    TF 2.4 restored these into variables its optimizer read at every step, so a checkpoint's value
    overrode the constructor's; this keeps that. A value today's optimizer has no setting for raises.
    """

    def __init__(self, optimizer: Any, name: str) -> None:
        self._optimizer, self._name = optimizer, name

    def _serialize_to_tensors(self) -> dict[str, Any]:
        value = _flavour.optimizer_hyperparameter(self._optimizer, self._name)
        return {"VARIABLE_VALUE": tf.constant(_NEUTRAL.get(self._name, 0.0) if value is None else value)}

    def _restore_from_tensors(self, restored_tensors: dict[str, Any]) -> Any:
        value = float(restored_tensors["VARIABLE_VALUE"].numpy())
        problem = tf24_hyperparameter_problem(self._optimizer, self._name, value)
        if problem is not None:
            raise ValueError(
                f"The checkpoint holds TF 2.4 hyperparameter {problem}, so TF 2.4's training cannot be continued. "
                "Build the optimizer exactly as the code that saved the checkpoint did."
            )
        set_tf24_hyperparameter(self._optimizer, self._name, value)
        return tf.no_op()


def is_tf24_hyperparameter(name: str) -> bool:
    """Whether TF 2.4 checkpointed `name` as a hyperparameter variable that today's optimizers keep as a float."""
    return name in _TF24_HYPERPARAMETERS


def tf24_hyperparameter_problem(optimizer: Any, name: str, value: float) -> str | None:
    """Why a TF 2.4 checkpoint's `name`=`value` cannot be given to today's `optimizer`; None if it can."""
    if _flavour.optimizer_hyperparameter(optimizer, name) is None and value != _NEUTRAL.get(name):
        return f"{name}={value:g}, but the inner optimizer {type(optimizer).__name__} has no {name!r} setting"
    return None


def set_tf24_hyperparameter(optimizer: Any, name: str, value: float) -> None:
    """Gives today's `optimizer` a TF 2.4 checkpoint's hyperparameter, which overrode the constructor's in TF 2.4."""
    current = _flavour.optimizer_hyperparameter(optimizer, name)
    if current is not None and tf.constant(current, tf.float32).numpy() != tf.constant(value, tf.float32).numpy():
        setattr(optimizer, name, value)


class CheckpointsRefused(_flavour.Trackable):
    """A trackable base for our optimizers on a Keras whose optimizers are not (Keras 3.0): saving or restoring
    one raises, since the inner optimizer's state could not be part of the checkpoint."""

    def _trackable_children(self, save_type: Any = "checkpoint", **kwargs: Any) -> Any:
        raise _untrackable_keras_error(self)

    def _lookup_dependency(self, name: str, cached_dependencies: Any = None) -> Any:
        if cached_dependencies is not None:
            raise _untrackable_keras_error(self)
        return super()._lookup_dependency(name, cached_dependencies)


def _untrackable_keras_error(optimizer: Any) -> ValueError:
    return ValueError(
        f"{type(optimizer).__name__} cannot be saved in or restored from a TensorFlow checkpoint on Keras "
        f"{_flavour.keras_version()}: Keras 3.0's optimizers are not TensorFlow trackables, so their slots and "
        'iterations would be left out. Install Keras 3.1 or newer (`pip install "keras>=3.1"`), or use tf_keras '
        "(`pip install tf-keras` and set TF_USE_LEGACY_KERAS=1)."
    )


class TF24CheckpointNames:
    """Lets `tf.train.Checkpoint(...).restore` and `load_weights` read TF 2.4.0's optimizer layout.

    TF 2.4 checkpointed a loss-scale optimizer as its inner optimizer's state (`iter`,
    `learning_rate`, hyperparameter variables) plus `loss_scale`, with slots attached to the
    loss-scale optimizer. TensorFlow's restore asks the optimizer for each of those names
    (`_lookup_dependency`) and for each slot (`_create_or_restore_slot_variable`); this answers
    with today's variables. Slots of an optimizer not built yet are restored when it is built.
    """

    _deferred_dependencies: dict[str, Any]  # TensorFlow's Trackable, after this mixin in the MRO, keeps it
    _update_uid: int  # likewise: the number of the restore that last restored this optimizer

    def _lookup_dependency(self, name: str, cached_dependencies: Any = None) -> Any:
        if name.startswith(_INNER_CLASS_MARK):  # written first, so it is read before the slots
            self.__dict__["_checkpoint_inner_class"] = (self._update_uid, name[len(_INNER_CLASS_MARK) :])
            return (cached_dependencies or {}).get(name)  # ours when the class is the same
        if name in _POSITIONAL_SLOTS and cached_dependencies is not None:
            self._warn_if_restoring_slots_without_their_variables()
            other = self._other_class_inner()
            if other is not None and name == "inner_optimizer":  # Keras 3 checkpoints slots under it
                return other
            inner_slots = getattr(_flavour.wrapped_optimizer(self), "_variables", None)
            if other is not None and inner_slots is not None and cached_dependencies.get(name) is inner_slots:
                return _OtherClassPositions(other)  # Keras 2's class checkpoints the inner optimizer's list as its own
        found = super()._lookup_dependency(name, cached_dependencies)  # type: ignore[misc]
        if found is not None:
            return found
        inner = _flavour.wrapped_optimizer(self)
        if inner is None:
            return None
        if name == "iter":
            return inner.iterations
        if name == "learning_rate" and _flavour.learning_rate_variable(inner) is not None:
            return _flavour.learning_rate_variable(inner)
        if name in _TF24_HYPERPARAMETERS or name == "learning_rate":
            return self._tf24_hyperparameter(name)
        if name == "base_optimizer":  # TF 2.4's inner optimizer: the same variables as the names above
            return None
        tracked = getattr(inner, name, None)  # state tracked by attribute name, e.g. tf_keras's `_index_dict`
        if isinstance(tracked, _flavour.Trackable):
            return tracked
        if cached_dependencies is not None and name in _SLOT_LISTS - _slots.slot_lists_of_class(inner):
            # Another optimizer class's slots, in a checkpoint that does not name its class.
            warn_slots_not_restored(f"slots {name!r} that {type(inner).__name__} does not keep", inner)
            return None
        if cached_dependencies is not None:  # TensorFlow is restoring a checkpoint that holds `name`
            if _flavour.optimizer_is_built(inner):
                raise _unmatched_error(self, [name])
            # Keras makes some state only when it builds (`momentums`): decided at the first step.
            self.__dict__.setdefault("_tf24_unmatched", set()).add(name)
        return None

    def _warn_if_restoring_slots_without_their_variables(self) -> None:
        """Warns, once per restore into a built inner optimizer, if the checkpoint does not hold, outside the optimizer,
        every variable whose slots (or, on Keras 3, whose value) it gives back.

        TF 2.4 restored a slot only with its variable, so an optimizer-only checkpoint restored into an optimizer that
        had stepped kept that optimizer's own slots (tests/goldens/tf24_stepped_restore.json); today's optimizers give
        the checkpoint's back by position, and Keras 3's the variables' saved values too. The checkpoint's object
        graph, walked once per restore along paths that pass no optimizer, says which variables it holds.
        """
        restore = self._update_uid
        if self.__dict__.get("_tf24_stepped_restore") == restore:
            return
        self.__dict__["_tf24_stepped_restore"] = restore
        inner = _flavour.wrapped_optimizer(self)
        if inner is None or _flavour.is_legacy_keras_optimizer(inner) or not _flavour.optimizer_is_built(inner):
            return  # TF 2.4's OptimizerV2 restores slots as TF 2.4 did; an unbuilt one: `_forget_slots_...`
        found = _flavour.restore_under_way(self)
        if found is None:
            return
        nodes, matched, own = found
        children = {child.local_name: child.node_id for child in nodes[own].children}
        inner_node = nodes[children.get("inner_optimizer", own)]
        updated = max(  # Keras 3's optimizers checkpoint the variables they update beside their slots
            (
                len(nodes[c.node_id].children)
                for c in (*nodes[own].children, *inner_node.children)
                if c.local_name == "_trainable_variables"
            ),
            default=0,
        )
        slotted = _slots.slotted_variable_count(inner) if self._other_class_inner() is None else 0
        count = max(slotted, updated)
        if not count:
            return
        held = set()
        for variable in _restored_outside_optimizers(nodes, matched):
            try:
                held.add(_flavour.optimizer_variable_index(inner, variable))
            except (KeyError, AttributeError, TypeError, ValueError):  # not a variable this optimizer updates
                continue
            if len(held) == count:
                return
        what = " and ".join(kept for kept, given in (("its slots", slotted), ("its saved value", updated)) if given)
        warnings.warn(
            f"This checkpoint is restored into a {_inner_access.tf24_class_name(self)} whose {type(inner).__name__} "
            f"is built, but it does not hold, outside the optimizer, {count - len(held)} of the {count} variables that "
            f"optimizer updates. For each of them today's {type(inner).__name__} takes {what} from the checkpoint, "
            "where TF 2.4 kept this job's own (it restored a slot only with its variable), so training goes on "
            "differently from TF 2.4. To resume as TF 2.4 did, put the model in the checkpoint when saving and "
            "restoring (`tf.train.Checkpoint(model=model, optimizer=optimizer)`), or restore before the first step.",
            UserWarning,
            stacklevel=1,
        )

    def _other_class_inner(self) -> _OtherClassInner | None:
        """How this restore sees the inner optimizer if the checkpoint names another class (`_INNER_CLASS_MARK`)."""
        written = self.__dict__.get("_checkpoint_inner_class")
        inner = _flavour.wrapped_optimizer(self)
        # TensorFlow marks the optimizer with the restore's number before it looks up the optimizer's children.
        if written is None or written[0] != self._update_uid or inner is None or written[1] == type(inner).__name__:
            return None
        other = self.__dict__.get("_checkpoint_other_inner")
        if other is None or other.restore != written:
            other = self.__dict__["_checkpoint_other_inner"] = _OtherClassInner(inner, written)
        return other

    def _tf24_hyperparameter(self, name: str) -> Any:
        """What takes a TF 2.4 hyperparameter's checkpointed value (`learning_rate` when it is a schedule)."""
        taken = self.__dict__.setdefault("_tf24_hyperparameters", {})
        if name not in taken:
            if name == "learning_rate":  # a schedule: TF 2.4 checkpointed nothing for it but the step
                with tf.init_scope():
                    taken[name] = tf.Variable(0.0, trainable=False, name="tf24_learning_rate")
            else:
                taken[name] = _TF24Hyperparameter(_flavour.wrapped_optimizer(self), name)
        return taken[name]

    def _create_or_restore_slot_variable(
        self, slot_variable_position: Any, slot_name: str, variable: Any, slot_variable_shape: Any = None
    ) -> Any:
        inner = _flavour.wrapped_optimizer(self)
        if _flavour.optimizer_is_built(inner):
            return _tf24_slot(inner, variable, slot_name)
        pending = self.__dict__.setdefault("_tf24_pending_slots", [])
        pending.append((variable, slot_name, slot_variable_position))
        return None

    def _restore_tf24_slots(self) -> None:
        """Restores slots read from a TF 2.4 checkpoint before the inner optimizer was built; it is now."""
        pending = self.__dict__.pop("_tf24_pending_slots", None)
        if pending:
            inner = _flavour.wrapped_optimizer(self)
            with tf.init_scope():
                for variable, slot_name, position in pending:
                    position.restore(_tf24_slot(inner, variable, slot_name))

    def _forget_slots_saved_without_their_variables(self, var_list: Any) -> None:
        """Resets slots a deferred restore gave back although the checkpoint did not hold their variables.

        TF 2.4 checkpointed a slot only with the variable it belongs to, so an optimizer-only checkpoint (TensorFlowTTS
        saves `tf.train.Checkpoint(steps=..., epochs=..., optimizer=...)`) resumed with fresh slots. Today's optimizers
        checkpoint their slots by position and give them all back; this puts those slots back to their initial value.
        """
        restore = getattr(self, "_update_uid", -1)
        inner = _flavour.wrapped_optimizer(self)
        if restore < 0 or inner is None:
            return
        reset = []
        for variable in var_list:
            if getattr(variable, "_update_uid", -1) == restore:  # restored with the optimizer: its slots were saved
                continue
            for slot_name in _slots.slot_names(inner):
                slot = _slots.slot_variable(inner, variable, slot_name)
                if getattr(slot, "_update_uid", -1) == restore:
                    reset.append((slot, _slots.initial_slot_value(inner, slot_name)))
        if not reset:
            return
        with tf.init_scope():
            for slot, value in reset:
                slot.assign(tf.fill(tf.shape(slot), tf.cast(value, slot.dtype)))
        warnings.warn(
            f"The checkpoint restored into this {_inner_access.tf24_class_name(self)} does not hold the variables "
            f"that {len(reset)} of its {type(inner).__name__} slots belong to, so those slots start from their "
            "initial value, as in TF 2.4, which checkpointed a slot only with its variable. To resume them, put the "
            "model in the same checkpoint as the optimizer (`tf.train.Checkpoint(model=model, optimizer=optimizer)`).",
            UserWarning,
            stacklevel=2,
        )

    def _check_restored_everything(self) -> None:
        """Raises for checkpoint names that were left for the build and that the build did not make."""
        waiting = self.__dict__.pop("_tf24_unmatched", set()) & set(self._deferred_dependencies)
        if waiting:
            raise _unmatched_error(self, sorted(waiting))


def _unmatched_error(optimizer: Any, names: list[str]) -> ValueError:
    inner = _flavour.wrapped_optimizer(optimizer)
    return ValueError(
        f"The checkpoint holds {', '.join(map(repr, names))} under this {_inner_access.tf24_class_name(optimizer)}, "
        f"but nothing in it or its inner optimizer {type(inner).__name__} keeps state of that name, so it would be "
        "dropped. "
        "Build the optimizer exactly as the code that saved the checkpoint did (same optimizer class), or "
        "restore only what matches with lossscale_compat.restore_tf24_checkpoint."
    )


def _tf24_slot(inner: Any, variable: Any, slot_name: str) -> Any:
    try:
        return _slots.slot_variable(inner, variable, slot_name)
    except (KeyError, ValueError) as error:
        raise ValueError(
            f"The checkpoint holds TF 2.4 slot {slot_name!r} of variable {variable.name!r}, but the inner "
            f"optimizer {type(inner).__name__} keeps no such slot for it ({error}). Build the optimizer "
            "exactly as the TF 2.4 code did before restoring."
        ) from None


# Where today's checkpoints keep the inner optimizer's slots, by position: Keras 3 under the inner optimizer, Keras 2's
# class as its own list. TF 2.4's checkpoints keep each slot with its variable instead.
_POSITIONAL_SLOTS = frozenset({"inner_optimizer", "_variables"})


def _restored_outside_optimizers(nodes: Any, matched: Any) -> Iterator[Any]:
    """The objects holding values that a restore of checkpoint graph `nodes` reaches from its root along paths that
    pass no optimizer (Keras 3's also checkpoint the variables they update), breadth first."""
    queue, seen = collections.deque([(0, matched.get(0))]), {0}
    while queue:
        node_id, live = queue.popleft()
        if live is None or callable(getattr(type(live), "apply_gradients", None)):
            continue
        if nodes[node_id].attributes:
            yield live
        children = live._trackable_children()
        for child in nodes[node_id].children:
            if child.node_id not in seen:
                seen.add(child.node_id)
                found = matched.get(child.node_id)
                queue.append((child.node_id, _lookup(live, child.local_name, children) if found is None else found))


def _lookup(trackable: Any, name: str, children: dict[str, Any]) -> Any:
    """What `trackable` answers a restore for its checkpoint child `name`, or None if it raises."""
    try:
        return trackable._lookup_dependency(name, children)
    except Exception:  # noqa: BLE001 - a layer refusing a name; the restore itself reports it
        return None


# The attributes that hold an optimizer's slots, one entry per variable (`momentums`): in a checkpoint restored
# into another optimizer class, they are the writer's slots, which TF 2.4 left out by name.
_SLOT_LISTS = frozenset(_slots.SLOT_ATTRIBUTES.values())


def warn_slots_not_restored(what: str, inner: Any) -> None:
    """Says that a restore into another optimizer class leaves `what` out, as TF 2.4 did."""
    warnings.warn(
        f"This checkpoint was written by a loss-scale optimizer wrapping another optimizer class than "
        f"{type(inner).__name__}: the step count and learning rate are restored, but not {what}; "
        f"{type(inner).__name__}'s slots start from zero, as in TF 2.4. To continue the saved training, wrap the "
        "same optimizer class as the code that saved the checkpoint.",
        UserWarning,
        stacklevel=1,
    )


# On Keras 3 a checkpoint of our optimizer names its inner optimizer's class in a child of this prefix (a
# node without values, so other readers pass over it). Keras 3 checkpoints slots by position, so a restore
# into another optimizer class reads the class first and restores no slots by position (`_OtherClassInner`).
_INNER_CLASS_MARK = "lossscale_compat_inner_class="


class _ValueOf(_flavour.Trackable):
    """Saves another variable's value under this name; restoring it changes nothing."""

    def __init__(self, variable: Any) -> None:
        self._variable = variable

    def _serialize_to_tensors(self) -> dict[str, Any]:
        return {"VARIABLE_VALUE": tf.convert_to_tensor(self._variable)}

    def _restore_from_tensors(self, restored_tensors: dict[str, Any]) -> Any:
        return tf.no_op()


def with_inner_class_mark(optimizer: Any, children: dict[str, Any]) -> dict[str, Any]:
    """`children` after a first, empty child whose name says the inner optimizer's class (`_INNER_CLASS_MARK`)."""
    saved = optimizer.__dict__.setdefault("_checkpoint_children", {})
    mark = _INNER_CLASS_MARK + type(optimizer.inner_optimizer).__name__
    if mark not in saved:
        saved.clear()
        saved[mark] = _flavour.Trackable()
    return {mark: saved[mark], **children}


def keras3_checkpoint_children(optimizer: Any, children: dict[str, Any]) -> dict[str, Any]:
    """Our Keras 3 optimizer's checkpoint children, laid out so that a plain optimizer can read it, as in TF 2.4.

    The loss-scale optimizer's own `_iterations` and `_learning_rate` (unused: the inner optimizer's count)
    are saved with the inner optimizer's values, so a plain Keras optimizer restores those, not 0 and 0.0.
    """
    inner = optimizer.inner_optimizer
    values = optimizer.__dict__.setdefault("_checkpoint_values", {})
    if values.get("key") is not inner:
        # The names the inner optimizer checkpoints its count and learning rate under (`_iterations`; Keras 3.2:
        # `iterations`). The same objects every time, so that a restore binds them for `assert_consumed`.
        values.clear()
        values["key"] = inner
        kept = [inner.iterations, _flavour.learning_rate_variable(inner)]
        for name, child in inner._trackable_children().items():
            if any(child is variable for variable in kept if variable is not None):
                values[name] = _ValueOf(child)
    own = {name: value for name, value in values.items() if name != "key"}
    return with_inner_class_mark(optimizer, {**children, **own})


class _OtherClassInner(_flavour.Trackable):
    """The inner optimizer, as seen by a restore of a checkpoint that another optimizer class wrote.

    TF 2.4 matched slots by name, so restoring an LSO(SGD with momentum) checkpoint into an LSO(Adam)
    restored the step count and learning rate and left Adam's slots at zero. Keras 3 matches slots by
    position and would load SGD's momentum as Adam's first moment; this restores what TF 2.4 did, and warns.
    """

    def __init__(self, inner: Any, restore: tuple[int, str]) -> None:
        self._inner, self.restore, self._written, self._warned = inner, restore, restore[1], False

    def _lookup_dependency(self, name: str, cached_dependencies: Any = None) -> Any:
        if name == "_variables":
            return _OtherClassPositions(self)
        if name in ("_iterations", "_learning_rate"):
            return self._inner._trackable_children().get(name)
        return None  # lists of slots by kind (`momentums`) or of model variables: restored elsewhere or not at all

    def kept_by_position(self, index: int) -> Any:
        """The inner optimizer's variable at `index` if it is one TF 2.4 would restore (the count, learning rate)."""
        kept = [self._inner.iterations, _flavour.learning_rate_variable(self._inner)]
        variables = list(self._inner._variables)
        if index < len(variables) and any(variables[index] is variable for variable in kept):
            return variables[index]
        self._warn_once()
        return None

    def _warn_once(self) -> None:
        if not self._warned:
            self._warned = True
            warn_slots_not_restored(f"the slot variables of the {self._written} that wrote it", self._inner)


class _OtherClassPositions(_flavour.Trackable):
    """The inner optimizer's `_variables` list, for `_OtherClassInner`."""

    def __init__(self, owner: _OtherClassInner) -> None:
        self._owner = owner

    def _lookup_dependency(self, name: str, cached_dependencies: Any = None) -> Any:
        return self._owner.kept_by_position(int(name)) if name.isdigit() else None
