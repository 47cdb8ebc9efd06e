"""The one place that knows which TensorFlow/Keras flavour is installed.

Every gate tests whether a feature exists, never a version number. Everything
else in the package asks this module instead of probing TensorFlow or Keras.
It imports nothing of ours but the table of tested stacks, whose range it checks once, on first use:
the modules above it choose what to build from its answers.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import importlib
import inspect
import sys
import warnings
from typing import Any

import numpy as np
import tensorflow as tf

from lossscale_compat import _stacks


def keras_version() -> str:
    """The version of the Keras that `tf.keras` resolves to: Keras 3, tf_keras, or TF 2.15's Keras 2."""
    package = tf.keras.__name__.split(".")[0]  # `keras` or `tf_keras`; only the package has `__version__`
    return str(importlib.import_module(package).__version__)


_stacks.warn_if_untested(tf.__version__, keras_version())

# Trackable base with the `_track_trackable` hook that names checkpoint dependencies;
# public as `tf.__internal__.tracking.Trackable` on every supported TensorFlow.
Trackable: Any = tf.__internal__.tracking.Trackable


def _tf_compat_loss_scale_classes() -> dict[str, type]:
    """TensorFlow's own surviving `tf.compat.v1.mixed_precision` loss-scale classes, if any."""
    namespace = getattr(tf.compat.v1, "mixed_precision", None)
    names = ("LossScale", "FixedLossScale", "DynamicLossScale")
    return {name: getattr(namespace, name) for name in names if hasattr(namespace, name)}


TF_LOSS_SCALE_CLASSES: dict[str, type] = _tf_compat_loss_scale_classes()
"""Name -> TensorFlow's own class, for the names TensorFlow still ships."""


@functools.cache
def keras_loss_scale_optimizer() -> type[Any]:
    """Returns the modern `LossScaleOptimizer` class of the Keras that `tf.keras` resolves to."""
    return tf.keras.mixed_precision.LossScaleOptimizer


@functools.cache
def has_keras3_loss_scaling() -> bool:
    """Whether the modern LSO follows Keras 3 (`scale_loss`, no fixed mode) rather than Keras 2."""
    lso = keras_loss_scale_optimizer()
    return hasattr(lso, "scale_loss") and not hasattr(lso, "get_scaled_loss")


@functools.cache
def keras_public_prefix() -> str:
    """How users spell the installed Keras's mixed-precision namespace."""
    return "keras.mixed_precision" if has_keras3_loss_scaling() else "tf.keras.mixed_precision"


@functools.cache
def keras2_loss_scale_optimizer_for_new_optimizers() -> type[Any]:
    """Keras 2's concrete LossScaleOptimizer for `tf.keras.optimizers.Optimizer` (not OptimizerV2)."""
    return sys.modules[keras_loss_scale_optimizer().__module__].LossScaleOptimizerV3


@functools.cache
def keras2_loss_scale_optimizer_for_legacy_optimizers() -> type[Any]:
    """Keras 2's concrete LossScaleOptimizer for `tf.keras.optimizers.legacy` optimizers: TF 2.4's class."""
    return sys.modules[keras_loss_scale_optimizer().__module__].LossScaleOptimizer


# The stack's own `tf.keras.optimizers`, before legacy mode can overlay the name (it imports this module first).
STACK_OPTIMIZERS: Any = tf.keras.optimizers


def current_optimizer_class() -> type[Any]:
    """The base class of the stack's current (not legacy) optimizers, whatever `tf.keras.optimizers` names now."""
    return STACK_OPTIMIZERS.Optimizer


def tf24_optimizers_module() -> Any:
    """Keras 2's `tf.keras.optimizers.legacy`, which is TF 2.4's `OptimizerV2` family; None on Keras 3."""
    return None if has_keras3_loss_scaling() else getattr(STACK_OPTIMIZERS, "legacy", None)


def keras_optimizer_base_without_optimizer_v2() -> Any:
    """The optimizer base class when this Keras has no TF 2.4 `OptimizerV2` family at all (Keras 3), else None."""
    return current_optimizer_class() if tf24_optimizers_module() is None else None


def keras3_layer_without_tf24_dtype_attributes() -> tuple[Any, bool] | None:
    """Keras 3's `Layer` class, which lacks TF 2.4's private dtype attributes (`_compute_dtype`, ...), and whether it
    keeps a layer's policy as a plain `dtype_policy` attribute with no `_dtype_policy` (Keras 3.0-3.2); else None."""
    layer = tf.keras.layers.Layer
    return None if hasattr(layer, "_compute_dtype") else (layer, not hasattr(layer, "dtype_policy"))


def keras_has_tf1_graph_mode() -> bool:
    """Whether this Keras has optimizers that run in TF1 graph mode (Keras 2's `OptimizerV2`); Keras 3's optimizers
    and models run eagerly or inside `tf.function` only."""
    return tf24_optimizers_module() is not None


def eager_variable_in_plain_graph(variable: tf.Variable) -> bool:
    """True in a `tf.Graph` that is not a function, or a function traced inside one (SavedModel's export graph), for
    a variable made eagerly: there it cannot be read or assigned."""
    if tf.executing_eagerly():
        return False
    with tf.init_scope():
        outside_is_eager = tf.executing_eagerly()  # true in an ordinary tf.function
    return not outside_is_eager and not tf.is_symbolic_tensor(variable.handle)


def in_tf1_graph_mode() -> bool:
    """Whether TF1 graph mode is on (`tf.compat.v1.disable_eager_execution()`), not merely a `tf.function`."""
    return not tf.compat.v1.executing_eagerly_outside_functions()


def sums_gradients_as_its_base(optimizer: Any) -> bool:
    """Whether the `OptimizerV2` `optimizer` sums gradients across replicas as its base class does: Keras's own
    all-reduce, and no override of the steps before it (`_transform_unaggregated_gradients`, `_aggregate_gradients`)."""
    base = tf24_optimizers_module().Optimizer
    default = getattr(sys.modules[base.__module__], "optimizer_utils", None)
    return (
        default is not None
        and optimizer.gradient_aggregator is default.all_reduce_sum_gradients
        and type(optimizer)._aggregate_gradients is base._aggregate_gradients
        and type(optimizer)._transform_unaggregated_gradients is base._transform_unaggregated_gradients
    )


def is_legacy_keras_optimizer(optimizer: Any) -> bool:
    """Whether `optimizer` is a Keras 2 `tf.keras.optimizers.legacy` optimizer (TF 2.4's OptimizerV2)."""
    legacy: Any = getattr(STACK_OPTIMIZERS, "legacy", None)
    try:
        base = legacy.Optimizer
    except (AttributeError, ImportError):  # Keras 3 raises ImportError for `optimizers.legacy.*`
        return False
    return isinstance(optimizer, base)


def optimizer_base_class(optimizer: Any) -> type[Any]:
    """The Keras base class of `optimizer`'s kind: TF 2.4's `OptimizerV2` for a legacy one, else today's."""
    return STACK_OPTIMIZERS.legacy.Optimizer if is_legacy_keras_optimizer(optimizer) else current_optimizer_class()


def tf24_optimizers_in_effect() -> bool:
    """Whether `tf.keras.optimizers` gives TF 2.4's `OptimizerV2` family now (legacy mode's `tf24_optimizers`)."""
    legacy = tf24_optimizers_module()
    return legacy is not None and getattr(tf.keras.optimizers, "Optimizer", None) is getattr(legacy, "Optimizer", 0)


def config_loads_as_optimizer_v2(config: dict, custom_objects: Any = None) -> bool:
    """Whether a serialized optimizer loads as Keras 2's `OptimizerV2`: a legacy one's config, or TF 2.4's (no
    `is_legacy_optimizer` key) while `tf.keras.optimizers` gives TF 2.4's optimizers, unless `custom_objects`
    names a class of today's optimizers for it."""
    legacy = tf24_optimizers_module()
    if legacy is None:
        return False
    custom = {**keras_custom_objects(), **(custom_objects or {})}.get(config.get("class_name"))
    if isinstance(custom, type):
        return issubclass(custom, legacy.Optimizer)
    settings = config.get("config", {})
    if str(config.get("module", "")).endswith("optimizers.legacy") or settings.get("is_legacy_optimizer") is True:
        return True
    return "is_legacy_optimizer" not in settings and "module" not in config and tf24_optimizers_in_effect()


def deserialize_optimizer(config: Any, custom_objects: Any = None) -> Any:
    """Deserializes an optimizer config into the installed Keras's current (not legacy) optimizers."""
    if not isinstance(config, dict):
        return config
    if not has_keras3_loss_scaling():
        if config_loads_as_optimizer_v2(config, custom_objects):  # Keras 2's OptimizerV2
            return STACK_OPTIMIZERS.deserialize(config, custom_objects=custom_objects, use_legacy_optimizer=True)
        # Keras 2 picks its legacy OptimizerV2 for configs without this key, as TF 2.4's all are.
        config = dict(config, config=dict(config.get("config", {}), is_legacy_optimizer=False))
        return STACK_OPTIMIZERS.deserialize(config, custom_objects=custom_objects, use_legacy_optimizer=False)
    return STACK_OPTIMIZERS.deserialize(config, custom_objects=custom_objects)


def register_keras_serializable(cls: type, name: str) -> type:
    """Registers `cls` with the installed Keras's serialization as `lossscale_compat>{name}`."""
    return tf.keras.utils.register_keras_serializable(package="lossscale_compat", name=name)(cls)


def register_custom_object(name: str, obj: Any) -> None:
    """Makes Keras deserialization resolve the bare class name `name` to `obj`, as a custom object."""
    custom_objects = tf.keras.utils.get_custom_objects()
    custom_objects[name] = obj
    if not has_keras3_loss_scaling():
        # Keras 2's optimizer deserialization lower-cases built-in names before it looks anything up.
        custom_objects[name.lower()] = obj


def wrapped_optimizer(loss_scale_optimizer: Any) -> Any:
    """A loss-scale optimizer's inner optimizer, or None while it is still being constructed."""
    state = loss_scale_optimizer.__dict__
    return state.get("inner_optimizer", state.get("_optimizer"))  # Keras 3, Keras 2


def keras_state_variable(initial_value: Any, dtype: str, name: str) -> Any:
    """A non-trainable Keras 3 variable for optimizer state: not autocast, not aggregated across replicas."""
    accepted = inspect.signature(tf.keras.Variable.__init__).parameters
    options: dict[str, Any] = {"dtype": dtype, "trainable": False, "name": name}
    if "autocast" not in accepted:  # Keras 3.0 has neither `autocast` nor `aggregation`; 3.2 has both
        return tf.keras.Variable(initial_value, **options)
    try:  # Keras 3.7 added aggregation "none"
        return tf.keras.Variable(initial_value, autocast=False, aggregation="none", **options)
    except ValueError:  # Keras 3.2-3.6: "mean", which their own LossScaleOptimizer's state used
        return tf.keras.Variable(initial_value, autocast=False, aggregation="mean", **options)


@functools.cache
def optimizer_sums_replica_gradients() -> bool:
    """Whether a Keras 3 optimizer's `apply`, called in a replica context, sums the gradients over the replicas.

    Keras 3.5 and later sum them in `_backend_update_step`, before their cross-replica update. Keras 3.1-3.4 tried
    inside that update, where no replica context exists, and Keras 3.0 never did: their optimizers applied each
    replica's own gradients.
    """
    update_step = getattr(tf.keras.optimizers.Optimizer, "_backend_update_step", None)
    return update_step is not None and "_all_reduce_sum_gradients" in update_step.__code__.co_names


@functools.cache
def keras_optimizers_are_trackable() -> bool:
    """Whether Keras optimizers are TensorFlow trackables, which `tf.train.Checkpoint` needs.

    Keras 3.0's are not (its TensorFlow optimizer is a plain class); Keras 3.1 made them trackable, as Keras 2's were
    (Keras 2's `LossScaleOptimizer` is built by a metaclass, so only Keras 3's class is asked).
    """
    return not has_keras3_loss_scaling() or issubclass(keras_loss_scale_optimizer(), Trackable)


def assignable(keras_variable: Any) -> Any:
    """The TensorFlow variable behind a Keras 3 variable: its `assign` returns the assignment on every release.

    Keras 3.0-3.4's own `Variable.assign` returns None; from 3.5 on it returns the value.
    """
    return keras_variable.value


def tf24_variable(variable: Any) -> Any:
    """A Keras 3 variable as TF 2.4 handed its counters out: one that `int()` and `float()` take.

    Keras 3.5+'s variables take them; Keras 3.0-3.4's define neither `__int__` nor `__float__`, so for those
    this is the TensorFlow variable behind it.
    """
    return variable if hasattr(type(variable), "__int__") else variable.value


def tf24_hyperparameter(value: Any) -> Any:
    """The TensorFlow variable behind a Keras 3 variable, which TF 2.4's `tf.keras.backend.set_value` took.

    No Keras 3's `set_value` takes a Keras variable (it reads `dtype.name` of a string dtype). Anything else
    (a `tf.Variable`, a tf_keras variable, a tensor) is returned as it is.
    """
    if isinstance(value, tf.Variable):
        return value
    behind = getattr(value, "value", None)
    return behind if isinstance(behind, tf.Variable) else value


def learning_rate_schedule(optimizer: Any) -> Any:
    """The schedule a Keras optimizer was given as its learning rate, or None.

    TF 2.4's `opt.learning_rate` and `opt.lr` were that schedule (`opt.learning_rate(step)`); Keras 3's
    `learning_rate` is its value at the current step, and the schedule is kept in `_learning_rate`.
    """
    value = getattr(optimizer, "_learning_rate", None)
    return value if isinstance(value, tf.keras.optimizers.schedules.LearningRateSchedule) else None


def keras_variable_class_without_float() -> Any:
    """Keras 3's variable class if `float()` and `int()` cannot take its variables (Keras 3.0-3.4), else None."""
    if not has_keras3_loss_scaling():
        return None
    package = tf.keras.__name__.split(".")[0]
    exported = getattr(importlib.import_module(package), "Variable", None)
    # `keras.Variable` is a subclass of the backend's own variable class: take Keras' base of both.
    keras_classes = [cls for cls in getattr(exported, "__mro__", ()) if cls.__module__.split(".")[0] == package]
    if not keras_classes or hasattr(keras_classes[-1], "__float__"):
        return None
    return keras_classes[-1]


def keras_learning_rate_property() -> Any:
    """(class, property) of today's optimizer base class's `learning_rate`, which reads a schedule's current rate.

    None where `tf.keras.optimizers.Optimizer` is TF 2.4's `OptimizerV2`, whose `learning_rate` is the schedule.
    """
    for cls in type.mro(tf.keras.optimizers.Optimizer):
        value = vars(cls).get("learning_rate")
        if isinstance(value, property):
            return cls, value
    return None


def keras3_legacy_backend() -> Any:
    """`tf.keras.backend` when it is Keras 3's, whose `set_value` fails on a Keras variable, else None.

    Keras 3's `set_value` builds `np.asarray(value, dtype=x.dtype.name)`, and a Keras variable's `dtype` is a
    string; it takes the TensorFlow variable behind it (`tf24_hyperparameter`).
    """
    return tf.keras.backend if has_keras3_loss_scaling() else None


def is_base_constructor_counter(loss_scale_optimizer: Any) -> bool:
    """Whether `iterations` is being set by the Keras 3 base optimizer's constructor, before the inner optimizer.

    Keras 3.0-3.4's base constructor assigns its new counter to `self.iterations`; from 3.5 on it sets
    `self._iterations` behind a read-only property, so a subclass's `iterations` setter never sees it.
    """
    return wrapped_optimizer(loss_scale_optimizer) is None


def learning_rate_variable(optimizer: Any) -> Any:
    """The variable holding a Keras optimizer's learning rate, or None (e.g. for a schedule)."""
    variable = getattr(optimizer, "_learning_rate", None)
    return variable if hasattr(variable, "assign") else None


def tf24_hyperparameter_variables(optimizer: Any) -> dict[str, Any]:
    """A Keras optimizer's hyperparameter variables by TF 2.4's checkpoint names: all of TF 2.4's `OptimizerV2`'s
    (`learning_rate`, `decay`, `momentum`, ...; made here if not yet), only the learning rate's today (the others
    are floats)."""
    create_hyperparameters = getattr(optimizer, "_create_hypers", None)
    if create_hyperparameters is None:
        variable = learning_rate_variable(optimizer)
        return {} if variable is None else {"learning_rate": variable}
    create_hyperparameters()
    return {name: value for name, value in optimizer._hyper.items() if hasattr(value, "assign")}


def loss_scale_state_variables(optimizer: Any) -> Any:
    """(scale, counter) variables of a dynamic loss-scale optimizer of any flavour, else None."""
    scale = getattr(optimizer, "dynamic_scale", None)  # Keras 3, and ours on Keras 3
    counter = getattr(optimizer, "step_counter", None)
    if scale is None and getattr(optimizer, "dynamic_counter", None) is not None:  # Keras 2
        scale, counter = optimizer._loss_scale._current_loss_scale, optimizer.dynamic_counter
    return None if scale is None else (scale, counter)


def optimizer_hyperparameter(optimizer: Any, name: str) -> Any:
    """A Keras optimizer's constructor hyperparameter `name` (`momentum`, `beta_1`) as a float, or None.

    Keras 3 and Keras 2's optimizers keep them as plain attributes; TF 2.4's kept variables.
    """
    value = getattr(optimizer, name, None)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def new_skipped_steps_counter() -> tf.Variable:
    """A loss-scale optimizer's count of skipped steps: int64, updated once per step in cross-replica context."""
    with tf.init_scope():
        counter = tf.Variable(
            0,
            dtype=tf.int64,
            trainable=False,
            name="skipped_steps",
            synchronization=tf.VariableSynchronization.ON_WRITE,
            aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
        )
    track_for_keras_graph_initialization(counter)
    return counter


def track_for_keras_graph_initialization(variable: tf.Variable) -> None:
    """Lets a TF1-graph `fit` initialize `variable`, as Keras 2 does for its loss-scale state; no-op where Keras
    has no TF1 graph mode (Keras 3) or in eager execution."""
    backend = getattr(sys.modules[keras_loss_scale_optimizer().__module__], "backend", None)
    track = getattr(backend, "track_variable", None)
    if track is not None and in_tf1_graph_mode():
        track(variable)


def current_loss_scale(optimizer: Any) -> Any:
    """The loss scale of any flavour's loss-scale optimizer (ours, Keras 3's, Keras 2's) as a float32 tensor.

    None when `optimizer` scales no loss (a plain optimizer without `loss_scale_factor`).
    """
    state = loss_scale_state_variables(optimizer)
    if state is not None:
        return tf.convert_to_tensor(state[0], tf.float32)
    scale = getattr(optimizer, "loss_scale", None)  # ours and Keras 2's fixed scale
    if scale is not None and not isinstance(scale, str):
        return tf.cast(scale() if callable(scale) else scale, tf.float32)
    if isinstance(optimizer, keras_loss_scale_optimizer()):  # Keras 3's, before its build makes `dynamic_scale`
        return tf.constant(float(optimizer.initial_scale), tf.float32)
    factor = getattr(getattr(optimizer, "inner_optimizer", optimizer), "loss_scale_factor", None)  # Keras 3
    return None if factor is None else tf.constant(float(factor), tf.float32)


def skips_advance_iterations(optimizer: Any) -> bool:
    """Whether a skipped step advances this loss-scale optimizer's `iterations`: TF 2.4's rule (ours, Keras 2's).

    Keras 3's own class advances it only for applied steps.
    """
    return hasattr(optimizer, "skipped_steps") or not has_keras3_loss_scaling()


@functools.cache
def keras_loss_scale_optimizer_counts_steps() -> bool:
    """Whether Keras 3's own `LossScaleOptimizer.iterations` counts its steps: it reads the inner optimizer's.

    Keras 3.0-3.6's class keeps the counter its base constructor made, which no step advances (its inner
    optimizer's counts them); Keras 3.10 reads the inner optimizer's through a property of its own.
    """
    return "iterations" in vars(keras_loss_scale_optimizer())


def iterations_never_advance(optimizer: Any) -> bool:
    """Whether `optimizer` is this Keras's own loss-scale optimizer with an `iterations` that no step advances."""
    return (
        isinstance(optimizer, keras_loss_scale_optimizer())
        and not hasattr(optimizer, "skipped_steps")  # ours, a subclass, counts every step
        and has_keras3_loss_scaling()
        and not keras_loss_scale_optimizer_counts_steps()
    )


@functools.cache
def keras_h5_loader_takes_compile() -> bool:
    """Whether `load_model` hands `compile` and `custom_objects` on to Keras's H5 loader.

    Keras 3.0-3.2 call their H5 loader without them, so it always compiles (and fails on TF 2.4's saved
    metrics); Keras 3.3 passes them on, and Keras 2's loader takes them itself.
    """
    load_model = tf.keras.models.load_model
    if not has_keras3_loss_scaling() or not hasattr(load_model, "__code__"):
        return True
    return "compile" in _keywords_of_call(load_model, "load_model_from_hdf5")


def keras_loader_takes_safe_mode() -> bool:
    """Whether `load_model` has Keras' own `safe_mode` (Keras 3); Keras 2 and tf_keras run a file's lambdas."""
    try:
        return "safe_mode" in inspect.signature(tf.keras.models.load_model).parameters
    except (TypeError, ValueError):
        return False


def _keywords_of_call(function: Any, callee: str) -> tuple:
    """The keyword names that `function`'s first call of an attribute named `callee` passes, from its bytecode."""
    found = False
    for instruction in dis.get_instructions(function):
        if instruction.argval == callee and instruction.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL"):
            found = True
        elif found and instruction.opname == "KW_NAMES":  # Python 3.11-3.12: an index into the constants
            return function.__code__.co_consts[instruction.arg]
        elif found and instruction.opname == "LOAD_CONST" and isinstance(instruction.argval, tuple):
            return instruction.argval  # Python 3.13+: CALL_KW reads the names from a constant
        elif found and instruction.opname.startswith("CALL"):
            return ()
    return ()


def has_summary_writing() -> bool:
    """Whether `tf.summary` can write event files: it needs the tensorboard package."""
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


def optimizer_is_built(optimizer: Any) -> bool:
    """Whether a Keras optimizer has created its per-variable state."""
    return bool(getattr(optimizer, "built", getattr(optimizer, "_built", False)))  # Keras 3, Keras 2


def build_optimizer(optimizer: Any, variables: Any) -> None:
    """Creates a Keras optimizer's per-variable state: `build` today, `_create_all_weights` on TF 2.4's OptimizerV2."""
    build = getattr(optimizer, "build", None)
    if build is not None:
        build(variables)
    else:
        optimizer._create_all_weights(variables)


def optimizer_variable_index(optimizer: Any, variable: Any) -> int:
    """Position of `variable` in a built optimizer's per-variable slot lists."""
    if hasattr(optimizer, "_get_variable_index"):  # Keras 3
        return optimizer._get_variable_index(variable)
    return optimizer._index_dict[optimizer._var_key(variable)]  # Keras 2's new optimizers


def restore_under_way(trackable: Any) -> tuple[Any, Any, int] | None:
    """TensorFlow's restore asking `trackable` for its children: (graph nodes, node id -> matched object, own node)."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        for position in [v for v in frame.f_locals.values() if type(v).__name__ == "CheckpointPosition"]:
            restore = position.checkpoint
            if restore.object_by_proto_id.get(position.proto_id) is trackable:
                return restore.object_graph_proto.nodes, restore.object_by_proto_id, position.proto_id
        frame = frame.f_back
    return None


def keras_custom_objects() -> dict[str, Any]:
    """Keras's global custom objects (`custom_object_scope`, `register_keras_serializable`)."""
    getter = getattr(tf.keras.utils, "get_custom_objects", None)
    return dict(getter()) if getter is not None else {}


def distribution_context() -> tuple[bool, bool]:
    """Returns (a non-default strategy is active, we are in cross-replica context)."""
    return tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context()


# --- Where legacy mode hooks in -------------------------------------------------------------------


@functools.cache
def keras_policy_class() -> type[Any]:
    """The class of the float dtype policies that `tf.keras.mixed_precision.Policy(name)` builds.

    Keras 2's `Policy` and Keras 3.0-3.1's and 3.5+'s `DTypePolicy` build themselves. Keras 3.2-3.4's
    `DTypePolicy` is a factory: its `__new__` returns a `FloatDTypePolicy`, and its own `__init__` ignores
    the name, so a subclass must build on the class it returns.
    """
    return type(tf.keras.mixed_precision.Policy("float32"))


def new_policy(cls: type, name: Any) -> Any:
    """A new, uninitialised instance of a subclass `cls` of `keras_policy_class()`.

    Keras 3.2-3.4's policy `__new__` takes the name (and nothing else); the others' is `object.__new__`.
    """
    construct: Any = keras_policy_class().__new__
    return object.__new__(cls) if construct is object.__new__ else construct(cls, name)


def keras_checkpoint_lookup_classes() -> list:
    """The Keras classes whose own `_lookup_dependency` answers checkpoint names for layers and models.

    The base layer's, and Keras 2's `Functional`, which answers for its layers itself during a restore.
    """
    layer = tf.keras.layers.Layer
    return [layer] + [
        cls
        for cls in tf.keras.Sequential.__mro__
        if cls is not layer and issubclass(cls, layer) and "_lookup_dependency" in vars(cls)
    ]


def keras_callback_class() -> type[Any]:
    """The callback base class of the Keras that `tf.keras` resolves to."""
    return tf.keras.callbacks.Callback


def keras_compile_hook() -> tuple[type[Any], str]:
    """(Model class, method) where Keras decides whether `compile` wraps the optimizer for mixed_float16.

    Keras 2 asks `Model._get_optimizer`; Keras 3 decides inside `compile`, and loads a model whose class overrides
    `compile` uncompiled: hence the class that defines the method, not `Model`.
    """
    method = "_get_optimizer" if hasattr(tf.keras.Model, "_get_optimizer") else "compile"
    return next(cls for cls in tf.keras.Model.__mro__ if method in vars(cls)), method


def keras2_graph_model() -> Any:
    """Keras 2's TF1 graph-mode `Model` (`training_v1`), whose `_set_optimizer` decides the mixed_float16 wrapping in
    graph mode in place of `_get_optimizer`; None where there is none (Keras 3)."""
    package = tf.keras.Model.__module__.rsplit(".", 1)[0]
    try:
        model = getattr(importlib.import_module(f"{package}.training_v1"), "Model", None)
    except ImportError:
        return None
    return model if hasattr(model, "_set_optimizer") else None


def keras_load_weights_without_tf_checkpoints() -> Any:
    """Keras's `Model` if its `load_weights` cannot read a TF-format checkpoint prefix (Keras 3), else None.

    Keras 2's `load_weights` takes TF 2.4's `by_name` argument and reads both formats.
    """
    model = tf.keras.Model
    return None if "by_name" in inspect.signature(model.load_weights).parameters else model


@functools.cache
def keras_fit_model_ending_epochs_early() -> Any:
    """Keras's `Model` if its `fit` lets a finite input of exactly `steps_per_epoch` batches run out, else None.

    TF 2.4, Keras 2 and later Keras 3 start such an input again at each epoch; early Keras 3 (3.0, 3.3.3) keeps one
    iterator, so every second epoch ends with no step. Found by running Keras's epoch iterator for two epochs.
    """
    package = tf.keras.Model.__module__.split(".models.", 1)[0]
    try:
        iterator_class = importlib.import_module(f"{package}.trainers.epoch_iterator").EpochIterator
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Keras's own "Your input ran out of data"
            iterator = iterator_class(x=np.zeros((2, 1), "float32"), batch_size=1, steps_per_epoch=2)
            steps = [sum(1 for _ in iterator.enumerate_epoch()) for _ in range(2)]
    except Exception:  # noqa: BLE001 - Keras 2 (no such module), or a Keras whose private iterator changed
        return None
    return tf.keras.Model if steps[1] < steps[0] else None


def keras_policy_deserializer_without_policy_v1() -> Any:
    """The module whose `deserialize` layers call for a serialized dtype policy, if it does not know TF 2.4's
    `PolicyV1` (Keras 3 hands back the class name as a string), else None.

    Keras 2's turns a `PolicyV1` config into its own `Policy`, as TF 2.4's did.
    """
    module = sys.modules.get(keras_policy_class().__module__.rsplit(".", 1)[0])
    deserialize = getattr(module, "deserialize", None)
    if deserialize is None:
        return None
    try:
        probe = deserialize({"class_name": "PolicyV1", "config": {"name": "float32"}})
    except (TypeError, ValueError):  # "Could not locate class 'PolicyV1'": Keras 3 raises it in some states
        return module
    return module if isinstance(probe, str) else None


def keras_optimizer_without_lr() -> Any:
    """Keras's optimizer base class if it lacks TF 2.4's `lr` alias of `learning_rate` (Keras 3), else None."""
    return None if hasattr(tf.keras.optimizers.Optimizer, "lr") else tf.keras.optimizers.Optimizer


def keras_apply_gradients_without_name() -> Any:
    """The optimizer base class defining `apply_gradients` if it takes no `name` (Keras 3), else None: a TF 2.4
    `OptimizerV2` subclass hands its own `name` on (`super().apply_gradients(grads_and_vars, name=name)`)."""
    for cls in type.mro(tf.keras.optimizers.Optimizer):
        if "apply_gradients" in vars(cls):
            return None if accepts_keyword(vars(cls)["apply_gradients"], "name") else cls
    return None


def tf_v1_loss_scale_optimizer_namespaces() -> list:
    """The `tf.compat.v1` namespaces that still hold TensorFlow's own `MixedPrecisionLossScaleOptimizer`."""
    v1 = tf.compat.v1
    namespaces = [getattr(getattr(v1, "train", None), "experimental", None), getattr(v1, "mixed_precision", None)]
    return [n for n in namespaces if n is not None and hasattr(n, "MixedPrecisionLossScaleOptimizer")]


def default_global_policy() -> Any:
    """What `set_global_policy` takes to go back to the default policy: None, or Keras 3's floatx (it refuses None)."""
    return tf.keras.backend.floatx() if hasattr(tf.keras.mixed_precision, "DTypePolicy") else None


def tf_keras_namespaces() -> list:
    """The module objects through which `tf.keras` is reached: TensorFlow's lazy loader and the imported module."""
    found = [tf.keras, sys.modules.get("tensorflow.keras"), getattr(tf.compat.v2, "keras", None)]
    unique: list = []
    for module in found:
        if module is not None and all(module is not seen for seen in unique):
            unique.append(module)
    return unique


def tf_compat_v1_keras_namespace() -> tuple[Any, bool]:
    """`tf.compat.v1.keras` (or None), and whether it is the same Keras module as `tf.keras` (Keras 3)."""
    namespace = getattr(tf.compat.v1, "keras", None)
    tf_keras_modules = {getattr(module, "__name__", None) for module in tf_keras_namespaces()}
    return namespace, getattr(namespace, "__name__", None) in tf_keras_modules


@functools.lru_cache(maxsize=256)
def accepts_keyword(function: Any, name: str) -> bool:
    """Whether `function` takes the keyword argument `name` (by name or through `**kwargs`)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


# Where an optimizer sums gradients across replicas: Keras 3's method, Keras 2's (`tf.keras.optimizers`), TF 2.4's.
_AGGREGATION_METHODS = ("_all_reduce_sum_gradients", "aggregate_gradients", "_aggregate_gradients")


@contextlib.contextmanager
def gradients_not_all_reduced(optimizer: Any) -> Any:
    """Within: `optimizer` applies gradients as given, without its all-reduce across replicas (Keras 3's or 2's, or
    TF 2.4's `OptimizerV2`'s, whose transform before the all-reduce Keras 2's wrapper has run already too)."""
    names = _AGGREGATION_METHODS[:2]
    if is_legacy_keras_optimizer(optimizer):
        names = ("_transform_unaggregated_gradients", _AGGREGATION_METHODS[2])
    patched = [name for name in names if hasattr(optimizer, name)]
    for name in patched:
        vars(optimizer)[name] = lambda grads_and_vars: grads_and_vars  # untracked by Keras
    try:
        yield
    finally:
        for name in patched:
            vars(optimizer).pop(name, None)


def aggregate_gradients(optimizer: Any, grads_and_vars: Any) -> Any:
    """`optimizer`'s own sum of `grads_and_vars` across replicas (TF 2.4's `_aggregate_gradients`), by any name."""
    for name in reversed(_AGGREGATION_METHODS):
        method = getattr(optimizer, name, None)
        if method is not None:
            return method(grads_and_vars)
    return list(grads_and_vars)  # Keras 3.0-3.4's optimizers sum nothing


@functools.cache
def optimizer_apply_gradients_takes(keyword: str) -> bool:
    """Whether this Keras's base `apply_gradients` takes `keyword`: Keras 2's takes TF 2.4's, Keras 3's none."""
    try:
        parameters = inspect.signature(tf.keras.optimizers.Optimizer.apply_gradients).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == keyword or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
