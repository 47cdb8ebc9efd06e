"""TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer`, as a subclass of Keras 3's.

Keras 3 changed what the optimizer does, not just its names. This adapter restores TF 2.4:

- The scale follows TF 2.4's algorithm (growth only if finite, floor of 1 on a decrease) and a fixed
  scale exists again. The state is a `DynamicLossScale`, checkpointed as `loss_scale/current_loss_scale`
  and `loss_scale/good_steps` (TF 2.4's keys) and also as `dynamic_scale`/`step_counter` (Keras 3's).
- A skipped step advances `iterations`.
- Finiteness is voted on every replica's own gradients, so one replica's NaN skips the step everywhere.
- Gradients are unscaled by multiplying with the reciprocal of the scale, in each gradient's dtype.

Two callers meet `apply_gradients`, and they pass different things:

- TF 2.4 code passes gradients that are not scaled: unscaled by `get_unscaled_gradients`, or of a loss it
  never scaled. TF 2.4 applied them as they were;
- Keras 3 code (`fit`, or `scale_loss` in a custom loop) passes *scaled* gradients.

`scale_loss`, Keras 3's method, marks that its caller scaled the loss; the next `apply` consumes the
mark and unscales. Without the mark, `apply` applies the gradients as TF 2.4 did. Both happen while a
step is traced, so the decision is made once per trace and costs nothing per step.
"""

from __future__ import annotations

import re
from typing import Any, Callable, NamedTuple

import tensorflow as tf

from lossscale_compat import (
    _conversions,
    _flavour,
    _forwarding,
    _inner_access,
    _keras_backports,
    _loss_scale,
    _optimizer_checkpoint,
    _strategy,
)

# Any to mypy: base classes chosen at import time.
_KerasLossScaleOptimizer: Any = _flavour.keras_loss_scale_optimizer()
_Trackable: Any = object if _flavour.keras_optimizers_are_trackable() else _optimizer_checkpoint.CheckpointsRefused


class _LossScaleState(_loss_scale.DynamicLossScale):
    """The optimizer's dynamic loss scale: TF 2.4's algorithm with a multiplier of 2."""

    _warns_on_construction = False

    def _add_weight(self, name: str, initial_value: Any, dtype: tf.DType) -> Any:
        # Keras 3 variables, like the native class's state: Keras saving and `get_state_tree` need them.
        variable = _flavour.keras_state_variable(initial_value, dtype.name, name)
        self._track_trackable(variable, name=name)
        return variable

    def _assignable_state(self) -> tuple[Any, Any]:
        return _flavour.assignable(self._current_loss_scale), _flavour.assignable(self._num_good_steps)


def _without_unique_suffix(name: Any, cls: type) -> Any:
    """`name` without the `_<n>` Keras 3 adds to make a default name (`sgd`, `rm_sprop`) unique."""
    if isinstance(name, str):
        base = re.sub(r"_\d+$", "", name)
        if base.replace("_", "") == cls.__name__.lower():
            return base
    return name


def _multiply(grad: Any, reciprocal: tf.Tensor) -> Any:
    if grad is None:
        return None
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values * tf.cast(reciprocal, grad.values.dtype), grad.indices, grad.dense_shape)
    return grad * tf.cast(reciprocal, grad.dtype)


class _Unscaled(NamedTuple):
    """Gradients unscaled while a step is traced for XLA, with the scaled gradients and reciprocal that gave them."""

    unscaled: list
    scaled: list
    reciprocal: Any


def _traced_for_xla() -> bool:
    """Whether a step is being traced for XLA (`jit_compile=True`); False where TensorFlow cannot say."""
    if tf.executing_eagerly():
        return False
    try:
        from tensorflow.python.ops import control_flow_util
    except ImportError:
        return False
    in_xla = getattr(control_flow_util, "GraphOrParentsInXlaContext", None)
    return in_xla is not None and bool(in_xla(tf.compat.v1.get_default_graph()))


def _sum_over_replicas(grads: list) -> list:
    """Each gradient summed over the replicas, in replica context; None stays None."""
    present = [grad for grad in grads if grad is not None]
    summed = iter(tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, present))
    return [None if grad is None else next(summed) for grad in grads]


class KerasLossScaleOptimizer(
    _optimizer_checkpoint.TF24CheckpointNames, _inner_access.InnerOptimizerAccess, _KerasLossScaleOptimizer, _Trackable
):
    """TF 2.4's non-experimental `tf.keras.mixed_precision.LossScaleOptimizer`, on the installed Keras."""

    _tf24_name = "LossScaleOptimizer"  # the class name TF 2.4's messages use

    built: bool  # set by the Keras optimizer base class

    def __init__(
        self,
        inner_optimizer: Any,
        dynamic: bool = True,
        initial_scale: Any = None,
        dynamic_growth_steps: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ):
        if not isinstance(inner_optimizer, tf.keras.optimizers.Optimizer):
            raise TypeError(
                f'"inner_optimizer" must be an instance of `keras.optimizers.Optimizer`, but got: {inner_optimizer}.'
            )
        _conversions.check_not_nested(inner_optimizer)
        _conversions.check_not_optimizer_v2_style(inner_optimizer)
        _keras_backports.apply()
        _conversions.check_scale_arguments(initial_scale, dynamic_growth_steps)
        if getattr(inner_optimizer, "_lossscale_compat_wrapped", False):
            raise ValueError(
                '"inner_optimizer" is already wrapped by a LossScaleOptimizer. An optimizer can only be '
                "wrapped by a single LossScaleOptimizer; create a new inner optimizer for this one."
            )
        if not isinstance(dynamic, bool):
            raise TypeError(
                f'"dynamic" argument to LossScaleOptimizer.__init__ must be a bool, but got: '
                f"{dynamic!r}. To pass a TF 2.4 `loss_scale`, use "
                "`lossscale_compat.LossScaleOptimizer(optimizer, loss_scale)`."
            )
        _strategy.check_strategy_supported()
        if dynamic:
            initial_scale = 2.0**15 if initial_scale is None else float(initial_scale)
            dynamic_growth_steps = 2000 if dynamic_growth_steps is None else int(dynamic_growth_steps)
        else:
            if initial_scale is None:
                raise ValueError('"initial_scale" must be specified if "dynamic" is False')
            initial_scale = float(initial_scale)
            if dynamic_growth_steps is not None:
                raise ValueError(
                    f'"dynamic_growth_steps" must be None if "dynamic" is False, but got: {dynamic_growth_steps}'
                )
        super().__init__(
            inner_optimizer, initial_scale=initial_scale, dynamic_growth_steps=dynamic_growth_steps, name=name, **kwargs
        )
        inner_optimizer._lossscale_compat_wrapped = True
        self._dynamic = dynamic
        self._auto_named = name is None
        self._caller_scaled = False
        # dynamic_growth_steps is set exactly when the scale is dynamic.
        self._set_state(
            None if dynamic_growth_steps is None else _LossScaleState(initial_scale, dynamic_growth_steps, 2.0)
        )
        self._set_skipped_steps(_flavour.new_skipped_steps_counter())

    @tf.__internal__.tracking.no_automatic_dependency_tracking
    def _set_state(self, state: _LossScaleState | None) -> None:
        self._state = state
        if state is not None:
            # TF 2.4's checkpoint names, and Keras 3's for the same two variables, so checkpoints
            # move both ways between this class and Keras 3's own LossScaleOptimizer.
            self._track_trackable(state, name="loss_scale")
            self._track_trackable(state._current_loss_scale, name="dynamic_scale")
            self._track_trackable(state._num_good_steps, name="step_counter")

    def _trackable_children(self, save_type: Any = "checkpoint", **kwargs: Any) -> Any:
        children = super()._trackable_children(save_type, **kwargs)
        if save_type != "checkpoint":
            return children
        return _optimizer_checkpoint.keras3_checkpoint_children(self, children)

    @tf.__internal__.tracking.no_automatic_dependency_tracking
    def _set_skipped_steps(self, counter: tf.Variable) -> None:
        self._skipped_steps = counter
        self._track_trackable(counter, name="skipped_steps")

    @property
    def skipped_steps(self) -> tf.Variable:
        """How many steps were skipped for non-finite gradients (checkpointed; not in `.keras` files)."""
        return self._skipped_steps

    # --- TF 2.4 surface ------------------------------------------------------------------------

    @property
    def dynamic(self) -> bool:
        return self._dynamic

    @property
    def loss_scale(self) -> tf.Tensor:
        """The current loss scale, a new float32 tensor on every access."""
        if self._state is None:
            return tf.constant(self.initial_scale, tf.float32)
        return tf.convert_to_tensor(self._state())

    @property
    def dynamic_counter(self) -> tf.Variable | None:
        return None if self._state is None else _flavour.tf24_variable(self._state._num_good_steps)

    @property
    def dynamic_scale(self) -> tf.Variable | None:
        return None if self._state is None else _flavour.tf24_variable(self._state._current_loss_scale)

    @property
    def step_counter(self) -> tf.Variable | None:
        return self.dynamic_counter

    def _todays_variables(self) -> list:
        # Keras 3's own order: this optimizer's variables, its loss-scale state, then the inner
        # optimizer's. `.keras` files store optimizer variables by position, so they move both ways.
        state = [] if self._state is None else [self._state._num_good_steps, self._state._current_loss_scale]
        # Keras 3.0's optimizer also tracks the state variables among its own: list each once, in Keras 3's place.
        own = [variable for variable in self._variables if all(variable is not kept for kept in state)]
        return own + state + self.inner_optimizer.variables

    @property
    def iterations(self) -> Any:
        adopted = self.__dict__.get("_adopted_iterations")
        return _flavour.tf24_variable(self.inner_optimizer.iterations) if adopted is None else adopted

    @iterations.setter
    def iterations(self, value: Any) -> None:
        """TF 2.4 adopted a variable given here (e.g. the global step) before the first step; so does this.

        Keras 3 keeps its own `iterations` variable, so an adopted variable is kept equal to it around each step.
        """
        if _flavour.is_base_constructor_counter(self):
            self.__dict__["_own_iterations"] = value  # unused: `iterations` is the inner optimizer's
            return
        if self.inner_optimizer.built:
            raise RuntimeError(
                "Cannot set `iterations` to a new Variable after the Optimizer weights have been created. "
                f"To change its value, use `optimizer.iterations.assign({value!r})` instead."
            )
        self.inner_optimizer.iterations.assign(value)
        if isinstance(value, tf.Variable):
            self.__dict__["_adopted_iterations"] = value

    def get_scaled_loss(self, loss: Any) -> Any:
        """Multiplies `loss` (a tensor, or a callable returning one) by the loss scale."""
        if callable(loss):
            return lambda: self._scaled(loss())
        return self._scaled(loss)

    def scale_loss(self, loss: Any) -> Any:
        """Keras 3's: multiplies `loss` by the loss scale; the next `apply_gradients` unscales the gradients."""
        self._caller_scaled = True
        return self._scaled(loss)

    def _scaled(self, loss: Any) -> Any:
        return loss * tf.cast(self.loss_scale, loss.dtype)

    def get_unscaled_gradients(self, grads: Any) -> list:
        """Divides `grads` by the loss scale; the next `apply_gradients` does not unscale them again."""
        self._caller_scaled = False
        grads = list(grads)
        reciprocal = 1.0 / self.loss_scale
        unscaled = self._unscale(grads, reciprocal)
        if _traced_for_xla():
            self.__dict__["_unscaled_in_trace"] = _Unscaled(unscaled, grads, reciprocal)
        return unscaled

    def _unscale(self, grads: Any, reciprocal: Any = None) -> list:
        if reciprocal is None:
            reciprocal = 1.0 / self.loss_scale
        return [_multiply(g, reciprocal) for g in grads]

    def _scaled_source(self, grads: list, caller_scaled: bool, recorded: _Unscaled | None) -> _Unscaled | None:
        """Under XLA with a dynamic scale: `grads` with the scaled gradients and reciprocal that give them, or None.

        Unscaled before the finiteness conditional, each unscaled gradient is an operand of it, which XLA writes out
        for the finite branch to read back. Unscaled again inside that branch instead, as Keras 3's own class does, the
        multiply fuses into the update, and in the finiteness vote (still on the unscaled gradients, as TF 2.4's) it
        fuses into the check. Gradients from this trace's `get_unscaled_gradients`, passed on unchanged, count as
        unscaled from their source; any others (clipped, logged, not ours) are applied as they are.
        """
        if self._state is None or not _traced_for_xla():
            return None
        if caller_scaled:
            reciprocal = 1.0 / self.loss_scale
            return _Unscaled(self._unscale(grads, reciprocal), grads, reciprocal)
        if recorded is not None and len(recorded.unscaled) == len(grads):
            if all(given is made for given, made in zip(grads, recorded.unscaled)):
                return recorded
        return None

    def minimize(
        self, loss: Any, var_list: Any, grad_loss: Any = None, name: Any = None, tape: tf.GradientTape | None = None
    ) -> Any:
        """Scales `loss`, computes and unscales its gradients, and applies them, as TF 2.4 did."""
        _conversions.check_not_tf1_graph_mode(f"`{_inner_access.tf24_class_name(self)}.minimize`")
        return _forwarding.minimize(self, loss, var_list, grad_loss, name, tape)

    # --- applying gradients --------------------------------------------------------------------

    def apply_gradients(
        self, grads_and_vars: Any, name: str | None = None, experimental_aggregate_gradients: bool = True
    ) -> Any:
        """TF 2.4's signature; `experimental_aggregate_gradients=False` takes gradients the caller already summed.

        Both arguments reach an inner optimizer's own `apply_gradients` as TF 2.4 passed them (see `_forwarding`).
        """
        _conversions.check_not_tf1_graph_mode(f"`{_inner_access.tf24_class_name(self)}.apply_gradients`")
        self.__dict__["_tf24_call"] = (name, experimental_aggregate_gradients)
        try:
            if experimental_aggregate_gradients:
                return super().apply_gradients(grads_and_vars)
            with _flavour.gradients_not_all_reduced(self.inner_optimizer):
                return super().apply_gradients(grads_and_vars)
        finally:
            self.__dict__.pop("_tf24_call", None)

    def build(self, var_list: Any) -> None:
        # Keras 3's build would add its own `dynamic_scale`/`step_counter`; the state lives in
        # `self._state` instead, so build only the optimizer machinery and the inner optimizer.
        self.inner_optimizer.build(var_list)
        super(_KerasLossScaleOptimizer, self).build(var_list)

    def apply(self, grads: Any, trainable_variables: Any = None) -> None:
        adopted = self.__dict__.get("_adopted_iterations")
        if adopted is None:
            self._apply(grads, trainable_variables)
            return
        self.inner_optimizer.iterations.assign(tf.cast(adopted, tf.int64))
        self._apply(grads, trainable_variables)
        adopted.assign(tf.cast(self.inner_optimizer.iterations, adopted.dtype))

    def _apply(self, grads: Any, trainable_variables: Any = None) -> None:
        if not self.built:
            # Lifted out of any tf.function, as Keras 2 did: slot variables created while a replica
            # step is traced under MirroredStrategy would otherwise be captured as placeholders.
            with tf.init_scope(), tf.name_scope(self.name):
                self.build(trainable_variables)
            self.built = True
            self._restore_tf24_slots()
            self._forget_slots_saved_without_their_variables(trainable_variables)
            self._check_restored_everything()
        grads = list(grads)
        caller_scaled, self._caller_scaled = self._caller_scaled, False
        recorded = self.__dict__.pop("_unscaled_in_trace", None)  # kept for this step only
        if tf.distribute.in_cross_replica_context() and tf.distribute.has_strategy():
            raise ValueError("apply_gradients() must be called in a replica context.")
        _strategy.check_strategy_supported()
        if not tf.distribute.has_strategy():
            source = self._scaled_source(grads, caller_scaled, recorded)
            if source is not None:
                unscaled = source.unscaled

                def apply() -> None:  # the scaled gradients are the operands; the branch unscales them again
                    self._inner_apply(self._unscale(source.scaled, source.reciprocal), trainable_variables)

                self._apply_or_skip(unscaled, apply)
                return
            if caller_scaled:
                grads = self._unscale(grads)
            self._apply_or_skip(grads, lambda: self._inner_apply(grads, trainable_variables))
            return
        if caller_scaled:
            grads = self._unscale(grads)

        def in_cross_replica(distribution: Any, grads: Any, summed: Any, trainable_variables: Any) -> None:
            def apply_each_replica() -> None:
                distribution.extended.call_for_each_replica(self._inner_apply, args=(summed, trainable_variables))

            self._apply_or_skip(grads, apply_each_replica)

        summed = grads if _flavour.optimizer_sums_replica_gradients() else _sum_over_replicas(grads)
        tf.distribute.get_replica_context().merge_call(in_cross_replica, args=(grads, summed, trainable_variables))

    def _inner_apply(self, grads: list, trainable_variables: Any) -> None:
        """Applies through the inner optimizer's `apply_gradients` when a TF 2.4-style subclass overrides it."""
        inner = self.inner_optimizer
        if not _forwarding.overrides_apply_gradients(inner) or trainable_variables is None:
            inner.apply(grads, trainable_variables)
            return
        # `fit` and `apply` come here without a TF 2.4 call: TF 2.4's `minimize` passed (None, True).
        args, kwargs = _forwarding.apply_gradients_arguments(inner, *self.__dict__.get("_tf24_call", (None, True)))
        inner.apply_gradients(list(zip(grads, trainable_variables)), *args, **kwargs)

    def _apply_or_skip(self, grads: list, apply: Callable[[], None]) -> None:
        """Updates the scale from `grads` and applies them, or skips the step when one is not finite.

        The scale's update and the step share one conditional on finiteness, as in Keras 3's own class: on a GPU
        each conditional reads its predicate on the host, so one fewer is one fewer sync per step.
        """
        state = self._state
        if state is None:  # a fixed scale: every step applies
            apply()
            return

        def apply_finite() -> None:
            state._update_finite()
            apply()

        def skip() -> None:
            state._update_non_finite()
            # TF 2.4 counted a skipped step; Keras 3 does not.
            self.inner_optimizer.iterations.assign_add(1)
            self._skipped_steps.assign_add(1)

        tf.cond(_loss_scale.all_replicas_finite(grads), apply_finite, skip)

    # --- configs -------------------------------------------------------------------------------

    def get_config(self) -> dict:
        """Keras 3's config, less the names Keras 3 made unique (`sgd_1`): equal constructions have equal configs."""
        config = super().get_config()
        if not self._dynamic:
            config["dynamic"] = False
        if self._auto_named:
            del config["name"]
        inner = config["inner_optimizer"]
        if isinstance(inner, dict) and isinstance(inner.get("config"), dict):
            inner["config"]["name"] = _without_unique_suffix(inner["config"].get("name"), type(self.inner_optimizer))
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> KerasLossScaleOptimizer:
        inner, kwargs = _conversions.optimizer_from_config(config, custom_objects)
        return cls(inner, **kwargs)
