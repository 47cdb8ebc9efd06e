"""TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer` on Keras 2 (tf_keras, or TF 2.15's keras).

Keras 2 kept TF 2.4's API and algorithm, so this class only adds what it lost: TF <= 2.3 configs,
TF 2.4's slot accessors, and its pass-through of hyperparameters and clipping to the inner optimizer.
It also keeps the loss-scale state in `.keras` and weights files, which Keras 2's own class drops.

Given a `tf.keras.optimizers.legacy` optimizer (TF 2.4's `OptimizerV2`, or a custom subclass of it),
the class builds its legacy form instead, as Keras 2's own class does: a subclass of Keras 2's
`OptimizerV2` loss-scale optimizer, which is TF 2.4's class, TF1 graph mode included.
"""

from __future__ import annotations

import contextlib
from typing import Any

import tensorflow as tf

from lossscale_compat import _conversions, _flavour, _forwarding, _inner_access, _optimizer_checkpoint

# Any to mypy: base classes chosen at import time.
_Keras2LossScaleOptimizer: Any = _flavour.keras2_loss_scale_optimizer_for_new_optimizers()
_Keras2LegacyLossScaleOptimizer: Any = _flavour.keras2_loss_scale_optimizer_for_legacy_optimizers()
_Keras2Metaclass: Any = type(_Keras2LossScaleOptimizer)


def _inner_argument(args: tuple, kwargs: dict) -> Any:
    """The inner optimizer of a loss-scale optimizer's constructor call, by position or by either keyword."""
    return args[0] if args else kwargs.get("inner_optimizer", kwargs.get("optimizer"))


class ByInnerOptimizer(_Keras2Metaclass):
    """Builds the form of a class that fits the inner optimizer, as Keras 2's own class does: its legacy form
    (`_legacy_form`) for a legacy (`OptimizerV2`) inner optimizer, its modern form (`_modern_form`) for any other.

    An instance of either form is an instance of the other too.
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        forms = cls.__dict__
        if _flavour.is_legacy_keras_optimizer(_inner_argument(args, kwargs)):
            other_form = forms.get("_legacy_form")
        else:
            other_form = forms.get("_modern_form")
        if other_form is not None:
            return other_form(*args, **kwargs)
        return super().__call__(*args, **kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        other_form = cls.__dict__.get("_legacy_form", cls.__dict__.get("_modern_form"))
        # `type.__instancecheck__` for the other form: its own check would ask this class again.
        return super().__instancecheck__(instance) or (
            other_form is not None and type.__instancecheck__(other_form, instance)
        )


class SkippedSteps:
    """Counts the steps Keras 2's own skip logic skips, in `skipped_steps` (checkpointed).

    The count is saved as a value of the optimizer's own checkpoint node (`optimizer/.ATTRIBUTES/skipped_steps`),
    not as a variable of its own: TF 2.4's checkpoints lack it, and an object they lack would fail TF 2.4 code's
    `assert_existing_objects_matched()` after it restores them. Checkpoints that kept it as a variable
    (`optimizer/skipped_steps`, as this package wrote them until 2026-11-27) still restore it.
    """

    _skipped_steps: tf.Variable
    _COUNT_KEY = "skipped_steps"

    def _keep_count(self, counter: tf.Variable) -> None:
        object.__setattr__(self, "_skipped_steps", counter)  # not Keras's attribute tracking: no variable of its own

    def _serialize_to_tensors(self) -> dict[str, Any]:
        if _flavour.eager_variable_in_plain_graph(self._skipped_steps):
            # SavedModel's export graph, which only describes TF1's save and restore ops; the count itself is
            # written with the SavedModel's variables (see `_trackable_children`).
            return {self._COUNT_KEY: tf.zeros([], tf.int64)}
        return {self._COUNT_KEY: self._skipped_steps.read_value()}

    def _restore_from_tensors(self, restored_tensors: dict[str, Any]) -> Any:
        if _flavour.eager_variable_in_plain_graph(self._skipped_steps):
            return tf.no_op()  # likewise: the restore TF1 loaders would run, which cannot reach the eager count
        return self._skipped_steps.assign(restored_tensors[self._COUNT_KEY])

    def _trackable_children(self, save_type: Any = "checkpoint", **kwargs: Any) -> Any:
        children = super()._trackable_children(save_type, **kwargs)  # type: ignore[misc]
        if save_type == "savedmodel":  # a SavedModel's functions may only read variables its object graph holds
            children = {**children, self._COUNT_KEY: self._skipped_steps}
        return children

    def _lookup_dependency(self, name: str, cached_dependencies: Any = None) -> Any:
        if name in (self._COUNT_KEY, "_skipped_steps"):  # the variable of earlier checkpoints
            return self._skipped_steps
        return super()._lookup_dependency(name, cached_dependencies)  # type: ignore[misc]

    def _count_skips_of(self, state: Any) -> None:
        """Wraps the scale state's `update`, which decides the skips; the count runs with its update op."""
        update = state.update

        def update_and_count(grads: Any) -> Any:
            update_op, should_apply = update(grads)
            count = self._skipped_steps.assign_add(tf.cast(tf.logical_not(should_apply), tf.int64))
            return tf.group(update_op, count), should_apply  # TF1 graph mode runs only what the op depends on

        state.update = update_and_count

    @property
    def skipped_steps(self) -> tf.Variable:
        """How many steps were skipped for non-finite gradients (checkpointed; not in `.keras` files)."""
        return self._skipped_steps


class KerasLossScaleOptimizer(
    SkippedSteps,
    _optimizer_checkpoint.TF24CheckpointNames,
    _inner_access.InnerOptimizerAccess,
    _Keras2LossScaleOptimizer,
    metaclass=ByInnerOptimizer,
):
    """TF 2.4's non-experimental `tf.keras.mixed_precision.LossScaleOptimizer`, on the installed Keras."""

    _tf24_name = "LossScaleOptimizer"  # the class name TF 2.4's messages use

    def __init__(
        self, inner_optimizer: Any, dynamic: bool = True, initial_scale: Any = None, dynamic_growth_steps: Any = None
    ):
        _conversions.check_not_nested(inner_optimizer)
        _conversions.check_scale_arguments(initial_scale, dynamic_growth_steps)
        if _flavour.is_legacy_keras_optimizer(inner_optimizer):  # a subclass of ours, which has no legacy form
            raise TypeError(
                f"{type(self).__name__}, a subclass of lossscale_compat's loss-scale optimizer, wraps "
                f"`tf.keras.optimizers` optimizers, but got the legacy optimizer {inner_optimizer}. Pass "
                f"`tf.keras.optimizers.{type(inner_optimizer).__name__}` instead; "
                "lossscale_compat.KerasLossScaleOptimizer itself takes legacy optimizers too."
            )
        was_wrapped = getattr(inner_optimizer, "_is_wrapped_by_loss_scale_optimizer", False)
        try:
            super().__init__(inner_optimizer, dynamic, initial_scale, dynamic_growth_steps)
        except Exception:
            # Keras 2 marks the inner optimizer as wrapped before it checks the other arguments; a
            # failed construction must leave it free, as TF 2.4 did.
            if isinstance(inner_optimizer, _flavour.current_optimizer_class()):
                inner_optimizer._is_wrapped_by_loss_scale_optimizer = was_wrapped
            raise
        self._keep_count(_flavour.new_skipped_steps_counter())
        if self.dynamic:
            self._count_skips_of(self._loss_scale)

    def _trackable_children(self, save_type: Any = "checkpoint", **kwargs: Any) -> Any:
        children = super()._trackable_children(save_type, **kwargs)
        return _optimizer_checkpoint.with_inner_class_mark(self, children) if save_type == "checkpoint" else children

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> KerasLossScaleOptimizer:
        inner, kwargs = _conversions.optimizer_from_config(config, custom_objects)
        return cls(inner, **kwargs)

    def apply_gradients(
        self, grads_and_vars: Any, name: Any = None, experimental_aggregate_gradients: bool = True, **kwargs: Any
    ) -> Any:
        """TF 2.4's signature (Keras 2's puts `skip_gradients_aggregation` second; it is taken by keyword).

        Both arguments reach an inner optimizer's own `apply_gradients` as TF 2.4 passed them (see `_forwarding`).
        """
        inner_name = type(self.inner_optimizer).__name__
        _conversions.check_not_tf1_graph_mode(f"`{self._tf24_name}.apply_gradients` over `{inner_name}`")
        grads_and_vars = list(grads_and_vars)
        if self.dynamic and grads_and_vars and all(grad is None for grad, _ in grads_and_vars):
            # TF 2.4 counted this as a finite step before the inner optimizer raised "No gradients
            # provided"; Keras 2 raises first.
            tf.distribute.get_replica_context().merge_call(lambda _: self._loss_scale.update([]))
        inner = self.inner_optimizer
        restored_unbuilt = (  # today's optimizers restore slots by position: `_forget_slots_...` applies TF 2.4's rule
            self._update_uid >= 0
            and not _flavour.is_legacy_keras_optimizer(inner)
            and not _flavour.optimizer_is_built(inner)
        )
        if restored_unbuilt or self.__dict__.get("_tf24_pending_slots") or self.__dict__.get("_tf24_unmatched"):
            variables = [variable for _, variable in grads_and_vars]
            with tf.init_scope():
                inner.build(variables)
            self._restore_tf24_slots()
            self._forget_slots_saved_without_their_variables(variables)
            self._check_restored_everything()
        self.__dict__["_tf24_call"] = (name, experimental_aggregate_gradients)
        try:
            return super().apply_gradients(
                grads_and_vars, experimental_aggregate_gradients=experimental_aggregate_gradients, **kwargs
            )
        finally:
            self.__dict__.pop("_tf24_call", None)

    def minimize(self, loss: Any, var_list: Any, grad_loss: Any = None, name: Any = None, tape: Any = None) -> Any:
        """TF 2.4's `minimize`, which also took a single variable as `var_list`."""
        return _forwarding.minimize(self, loss, var_list, grad_loss, name, tape)

    def _apply_gradients(self, grads: Any, wrapped_vars: Any) -> None:
        """Calls an inner optimizer's own `apply_gradients` with the arguments TF 2.4 passed it."""
        inner = self.inner_optimizer
        if not _forwarding.overrides_apply_gradients(inner):
            super()._apply_gradients(grads, wrapped_vars)
            return
        args, kwargs = _forwarding.apply_gradients_arguments(inner, *self.__dict__.get("_tf24_call", (None, True)))
        with _flavour.gradients_not_all_reduced(inner):  # Keras 2's wrapper has summed them already
            inner.apply_gradients(list(zip(grads, wrapped_vars.value)), *args, **kwargs)

    def save_own_variables(self, store: Any) -> None:
        """Keras 2's layout (the inner optimizer's variables by position), then the counter and the scale."""
        super().save_own_variables(store)
        count = len(self.variables)
        for offset, variable in enumerate(self._state_variables()):
            store[str(count + offset)] = variable.numpy()

    def load_own_variables(self, store: Any) -> None:
        """Loads files of this class, and of Keras 2's own class, which hold no loss-scale state."""
        state, count = self._state_variables(), len(self.variables)
        if state and len(store.keys()) == count + len(state):
            for offset, variable in enumerate(state):
                variable.assign(store[str(count + offset)])
            store = {str(i): store[str(i)] for i in range(count)}
        super().load_own_variables(store)

    def _state_variables(self) -> list:
        scale_and_counter = _flavour.loss_scale_state_variables(self)
        return [] if scale_and_counter is None else [scale_and_counter[1], scale_and_counter[0]]


class LegacyKerasLossScaleOptimizer(SkippedSteps, _Keras2LegacyLossScaleOptimizer, metaclass=ByInnerOptimizer):
    """TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer` over a legacy (`OptimizerV2`) optimizer.

    Keras 2's own class for these is TF 2.4's; this adds TF 2.4's argument checks, `skipped_steps`, and
    configs of either form. Called with any other optimizer, the class builds its modern form instead.
    """

    _tf24_name = "LossScaleOptimizer"

    def __init__(
        self, inner_optimizer: Any, dynamic: bool = True, initial_scale: Any = None, dynamic_growth_steps: Any = None
    ):
        if isinstance(inner_optimizer, _flavour.current_optimizer_class()):  # a subclass, which has no modern form
            raise TypeError(
                f"{type(self).__name__}, a subclass of TF 2.4's loss-scale optimizer, wraps TF 2.4's optimizers "
                f"(`OptimizerV2`, which legacy mode gives as `tf.keras.optimizers`), but got {inner_optimizer}, one "
                f"of today's optimizers. Pass `tf.keras.optimizers.legacy.{type(inner_optimizer).__name__}` "
                "instead, or subclass `lossscale_compat.KerasLossScaleOptimizer` for today's optimizers."
            )
        _conversions.check_not_nested(inner_optimizer)
        _conversions.check_scale_arguments(initial_scale, dynamic_growth_steps)
        was_wrapped = getattr(inner_optimizer, "_is_wrapped_by_loss_scale_optimizer", False)
        try:
            super().__init__(inner_optimizer, dynamic, initial_scale, dynamic_growth_steps)
        except Exception:
            if _flavour.is_legacy_keras_optimizer(inner_optimizer):  # marked before the other checks, as above
                inner_optimizer._is_wrapped_by_loss_scale_optimizer = was_wrapped
            raise
        with tf.init_scope():
            self._keep_count(_flavour.new_skipped_steps_counter())
        if self.dynamic:
            self._count_skips_of(self._loss_scale)

    def apply_gradients(
        self, grads_and_vars: Any, name: Any = None, experimental_aggregate_gradients: bool = True
    ) -> Any:
        """TF 2.4's: both arguments reach the inner optimizer's `apply_gradients` as TF 2.4 passed them, and with one
        replica the inner optimizer sums the gradients (its `gradient_aggregator`) after the finiteness check, as in
        TF 2.4. Keras 2 sums them first, which it keeps for several replicas, where each must see every inf."""
        grads_and_vars = list(grads_and_vars)
        if self.dynamic and grads_and_vars and all(grad is None for grad, _ in grads_and_vars):
            # TF 2.4 counted this as a finite step before the inner optimizer raised "No gradients provided".
            tf.distribute.get_replica_context().merge_call(lambda _: self._loss_scale.update([]))
        if experimental_aggregate_gradients and self._keras2_order_is_tf24s():
            return super().apply_gradients(grads_and_vars, name, True)  # Keras 2's own path, the cheaper
        summed = experimental_aggregate_gradients and tf.distribute.get_strategy().num_replicas_in_sync > 1
        self.__dict__["_tf24_call"] = (name, experimental_aggregate_gradients, summed)
        try:
            return super().apply_gradients(grads_and_vars, name, summed)
        finally:
            self.__dict__.pop("_tf24_call", None)

    def _keras2_order_is_tf24s(self) -> bool:
        """Whether Keras 2's order (sum the gradients, check them, apply) gives what TF 2.4's (check, then the inner
        optimizer sums and applies) gives: one replica, whose sum changes nothing, and an inner optimizer that sums
        as Keras does and takes `apply_gradients`' arguments as Keras 2 passes them."""
        inner = self._optimizer
        return (
            tf.distribute.get_strategy().num_replicas_in_sync == 1
            and not _forwarding.overrides_apply_gradients(inner)
            and _flavour.sums_gradients_as_its_base(inner)
        )

    def _apply_gradients(self, grads: Any, wrapped_vars: Any, name: Any) -> Any:
        """Calls the inner optimizer's `apply_gradients` with TF 2.4's arguments: `name` positionally to an override,
        and `experimental_aggregate_gradients` as given (Keras 2 passes False, having summed the gradients itself)."""
        if "_tf24_call" not in self.__dict__:  # Keras 2's own path (`_keras2_order_is_tf24s`)
            return super()._apply_gradients(grads, wrapped_vars, name)
        inner = self._optimizer
        name, aggregate, summed = self.__dict__["_tf24_call"]
        if _forwarding.overrides_apply_gradients(inner):
            args, kwargs = _forwarding.apply_gradients_arguments(inner, name, aggregate)
        else:
            args, kwargs = (), {"name": name, _forwarding.AGGREGATE: aggregate}
        with _flavour.gradients_not_all_reduced(inner) if summed else contextlib.nullcontext():
            return inner.apply_gradients(list(zip(grads, wrapped_vars.value)), *args, **kwargs)

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> Any:
        """This class again, in the form that fits the config's inner optimizer (a subclass: the subclass)."""
        inner, kwargs = _conversions.optimizer_from_config(config, custom_objects)
        return cls(inner, **kwargs)


KerasLossScaleOptimizer._legacy_form = LegacyKerasLossScaleOptimizer
LegacyKerasLossScaleOptimizer._modern_form = KerasLossScaleOptimizer
LegacyKerasLossScaleOptimizer.__name__ = LegacyKerasLossScaleOptimizer._tf24_name  # in messages, as TF 2.4's
