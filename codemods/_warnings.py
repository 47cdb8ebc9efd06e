"""Warning codes and their constant texts, shared by the command, the engine, the CLI and the docs."""

from __future__ import annotations

import dataclasses
import textwrap

from lossscale_compat import _mapping

# Sites the codemod leaves alone: a person has to look at them.
AMBIGUOUS_NAME = "LSC101"
STAR_ARGS = "LSC105"
POLICY_LOSS_SCALE = "LSC106"
UNSCALED_GRADIENTS_USED = "LSC107"
UNSUPPORTED_USE = "LSC110"
NAME_CLASH = "LSC111"
BAD_ARGUMENTS = "LSC112"
RECEIVER_NOT_PROVEN = "LSC113"
DISABLE_VALUE_USED = "LSC115"
TF1_LOSS_SCALE_OPTIMIZER = "LSC116"
# Notes on sites the codemod did rewrite (LSC107 and LSC123-126 explain an LSC120 hand-off).
GRAPH_REWRITE_NOTE = "LSC108"
SHIM_NOTE = "LSC109"
DISABLE_REMOVED_NOTE = "LSC117"
ITERATIONS_NOTE = "LSC118"
OPTIMIZER_SHIM_NOTE = "LSC119"
LOOP_SHIM_NOTE = "LSC120"
SCALE_READ_NOTE = "LSC121"
IMPORT_KEPT = "LSC122"
GRADIENTS_CLIPPED = "LSC123"
GRADIENTS_NORM_TAKEN = "LSC124"
GRADIENTS_ACCUMULATED = "LSC125"
GRADIENTS_LOGGED = "LSC126"
TF1_KEPT_NOTE = "LSC127"
ESCAPING_SHIM_NOTE = "LSC129"
# Why a LossScaleOptimizer call or a Keras optimizer's graph rewrite has no modern construction here: reasons a rule
# gives (`Unsafe`), never warned. Their rules send such a call to lossscale_compat's class instead (LSC119, LSC147;
# `rules.optimizer.SHIM_INSTEAD`). LSC102-LSC104 and LSC114, which left such a call alone, are no longer given.
LOSS_SCALE_NOT_VISIBLE = "loss scale not visible"
MULTIPLIER_NOT_TWO = "multiplier not 2"
FIXED_SCALE_NOT_INLINE = "fixed scale not inline"
FIXED_SCALE_NOT_EQUIVALENT = "fixed scale not equivalent"
# Sites left alone (issue 9): the object read cannot be proven. (LSC128, a graph rewrite of an optimizer of unknown
# kind with a loss-scale object, is no longer given: the call goes to the run-time fallback, LSC134.)
SCALE_READ_NOT_PROVEN = "LSC130"
CLASS_SHIM_NOTE = "LSC132"
UNTRACED_LOOP_NOTE = "LSC133"
# Sites no modern rewrite can be proven for, moved to a lossscale_compat run-time fallback (issue 25).
GRAPH_REWRITE_FALLBACK_NOTE = "LSC134"
POLICY_FALLBACK_NOTE = "LSC135"
CLASS_CHECK_NOTE = "LSC136"  # (issue 42: now the target's class, no longer a fallback)
MODULE_FALLBACK_NOTE = "LSC137"
CONFIG_EQUIVALENCE_NOTE = "LSC138"
CONFIG_COMPARED = "LSC139"
PRIVATE_IMPORT_NOTE = "LSC140"
UNSCALED_APPLY_SHIM_NOTE = "LSC141"
ITERATIONS_READ_NOTE = "LSC142"
GET_GRADIENTS_GONE = "LSC143"
CHECKPOINT_SHIM_NOTE = "LSC144"
FINAL_CLASS_SHIM_NOTE = "LSC145"
VALUE_FALLBACK_NOTE = "LSC146"
GRAPH_REWRITE_SHIM_NOTE = "LSC147"
# Calls the target's class takes differently from TF 2.4's (issue 33).
TF24_CALL_SHIM_NOTE = "LSC148"
TF24_CALL_NOT_PROVEN = "LSC149"
# The verifier (issue 30): the output still names something the target lacks, and no other warning says so.
NAME_LEFT = "LSC150"
DEVICE_CHECK_DROPPED = "LSC151"
CONFIG_COMPARED_UNTRACED = "LSC152"
# tf_keras: a file whose TF 2.4 behaviour depends on `OptimizerV2` keeps it (issue 44; `rules.legacy_optimizers`).
LEGACY_OPTIMIZER_NOTE = "LSC153"
LEGACY_OPTIMIZER_NOT_WRITTEN = "LSC154"
# A TF 2.4 name assigned to or deleted (`mp.LossScaleOptimizer = None`): left alone.
NAME_ASSIGNED = "LSC155"
# An optimizer whose `iterations` the file sets (`opt.iterations = step`): Keras 3's optimizers have no such setter.
ITERATIONS_SET_SHIM_NOTE = "LSC156"
# TF 2.3's `opt.loss_scale()`, which TF 2.4.0 refused (TypeError: its `loss_scale` is a tensor): left alone.
SCALE_CALLED = "LSC165"
# A notebook's IPython line (help `?`, shell `!`, a line magic) that names a loss-scaling API: left as it is.
IPYTHON_LINE_LEFT = "LSC170"
# File-level outcomes.
NOT_BYTE_EXACT = "LSC201"
NOTEBOOK_LAYOUT = "LSC202"
NOTEBOOK_CELL = "LSC203"
NOTEBOOK_CELL_LEFT = "LSC204"


def _listed(names: frozenset[str]) -> str:
    """`names` sorted, in words: "a, b and c"."""
    return " and ".join(", ".join(sorted(names)).rsplit(", ", 1))


MESSAGES = {
    AMBIGUOUS_NAME: (
        "This name is rebound, shadowed or ambiguous here, so it was left alone. "
        "Check which object it is and migrate it by hand."
    ),
    STAR_ARGS: (
        "This call passes `*args` or `**kwargs`, so its arguments cannot be folded and it was "
        "left alone. Instead, spell the arguments out and run the codemod again."
    ),
    POLICY_LOSS_SCALE: (
        "This reads the global policy's `loss_scale`, which a modern policy lacks (it raises AttributeError), and the "
        "global policy is not provably a `lossscale_compat.Policy` here (a policy is set by name, or this module "
        "builds none), so the read was left alone. Instead, build the policy with "
        "`lossscale_compat.Policy(name, loss_scale=...)` and set that, or read the scale from the optimizer "
        "(`optimizer.scale_loss(1.0)` of a Keras 3 `LossScaleOptimizer`: the current scale, before its first step too, "
        "where `.dynamic_scale` does not exist yet)."
    ),
    UNSCALED_GRADIENTS_USED: (
        "These unscaled gradients are used other than by `apply_gradients` of the same optimizer, "
        "where Keras 3's class would see different values, so the file keeps TF 2.4's contract "
        "(LSC120, LSC129, or an optimizer built in another module) and this call stays. To move to Keras 3 "
        "by hand: pass `apply_gradients` the scaled gradients (it unscales them itself) and divide any other "
        "use by `optimizer.scale_loss(1.0)`, the current scale (`.dynamic_scale` exists only after the first step)."
    ),
    UNSUPPORTED_USE: (
        "The codemod has no rule for this use of a TF 2.4 mixed-precision name, so it was left "
        "alone. Instead, rewrite it by hand (see docs/codemod.md)."
    ),
    NAME_CLASH: (
        "The modern name would clash with another name bound in this module, so it was left "
        "alone. Instead, import the modern name under a free alias and rewrite the site."
    ),
    BAD_ARGUMENTS: (
        "The arguments do not match the TF 2.4 signature, so the call was left alone. "
        "Instead, fix the call and run the codemod again."
    ),
    RECEIVER_NOT_PROVEN: (
        "This object is not provably a LossScaleOptimizer built from a TF 2.4 API in this scope "
        "(a parameter, an attribute or a rebound name), and its custom loop could not be rewritten as a "
        "whole: that needs both `get_scaled_loss` and `get_unscaled_gradients` on the same object in the "
        "same class or function, each with one argument, and the unscaled gradients bound to a name that "
        "only its `apply_gradients` reads. So the call was left alone. Instead, check it is a loss-scale "
        "optimizer and rewrite it by hand: `get_scaled_loss` becomes `scale_loss`, and Keras 3's "
        "`apply_gradients` unscales by itself."
    ),
    DISABLE_VALUE_USED: (
        "`disable_mixed_precision_graph_rewrite` has nothing left to disable, but this use is not "
        "a plain call statement (its value or the function itself is used), so it was left alone. "
        "Instead, delete the use by hand; the call returned None."
    ),
    TF1_LOSS_SCALE_OPTIMIZER: (
        "`MixedPrecisionLossScaleOptimizer` wraps a TF1 `tf.compat.v1.train.Optimizer` and has no "
        "modern equivalent, so it was left alone. Instead, move to a Keras optimizer wrapped in "
        "`keras.mixed_precision.LossScaleOptimizer`, or keep this TF1 code on `tf.compat.v1` "
        "unchanged."
    ),
    GRAPH_REWRITE_NOTE: (
        "The graph rewrite no longer exists: the optimizer is now wrapped explicitly. Also call "
        "`set_global_policy('mixed_float16')` before building the model to compute in float16."
    ),
    SHIM_NOTE: (
        "This LossScale object has no modern equivalent, so it now uses lossscale_compat's class, "
        "which keeps the TF 2.4 behaviour."
    ),
    DISABLE_REMOVED_NOTE: (
        "The graph rewrite no longer exists, so there is nothing to disable: the call was removed. "
        "If a `mixed_float16` policy replaced the rewrite, call `set_global_policy('float32')` "
        "here to compute in float32 again."
    ),
    ITERATIONS_NOTE: (
        "On Keras 3 a skipped (non-finite) step no longer advances `iterations`, as it did in TF 2.4, and "
        "this inner optimizer keys its update on `iterations` (Adam-style bias correction, a learning-rate "
        "schedule, EMA or gradient accumulation), so after the first skipped step it drifts from TF 2.4. "
        "To keep TF 2.4's numbers, use `lossscale_compat.KerasLossScaleOptimizer` here."
    ),
    OPTIMIZER_SHIM_NOTE: (
        "This `LossScaleOptimizer`'s loss scale cannot be proven equivalent to a modern construction "
        "(it is only known at run time, a multiplier other than 2, a fixed scale Keras 3 cannot express "
        "here, or `*args`), so the call now uses lossscale_compat's class with the same arguments, which "
        "keeps TF 2.4's behaviour for any value."
    ),
    UNSCALED_APPLY_SHIM_NOTE: (
        "This file calls `apply_gradients` without scaling a loss first (no `get_scaled_loss`), or calls "
        "`get_gradients`. TF 2.4's LossScaleOptimizer applied such gradients as they were; Keras 3's class would "
        "divide them by the loss scale (and has no `get_gradients`), so the optimizer is built with "
        "`lossscale_compat.KerasLossScaleOptimizer` (TF 2.4's contract, the same settings) and the file trains as "
        "before. To move to Keras 3 by hand: scale the loss with `optimizer.scale_loss` before taking gradients."
    ),
    ITERATIONS_READ_NOTE: (
        "This reads `iterations` of an optimizer now built with Keras 3's `LossScaleOptimizer`, which does not count a "
        "step it skips for non-finite gradients (TF 2.4's did), so from the first skipped step the value read here is "
        "lower than TF 2.4's by the number of skipped steps. To keep TF 2.4's count, count the steps yourself, or "
        "build the optimizer with `lossscale_compat.KerasLossScaleOptimizer`, which counts them as TF 2.4 did."
    ),
    GET_GRADIENTS_GONE: (
        "Keras 3's `LossScaleOptimizer` has no `get_gradients` (TF 2.4's scaled the loss and unscaled the gradients in "
        "it), and this object, not traced to its construction, is a loss-scale optimizer (the same receiver calls "
        "`get_scaled_loss`/`get_unscaled_gradients`), so where it is Keras 3's class this call raises AttributeError; "
        "it was left alone. Instead, take the gradients of `optimizer.scale_loss(loss)` with a `tf.GradientTape` and "
        "pass them to `apply_gradients` (it unscales them), or build the optimizer with "
        "`lossscale_compat.KerasLossScaleOptimizer`, which keeps TF 2.4's `get_gradients`."
    ),
    CHECKPOINT_SHIM_NOTE: (
        "This `LossScaleOptimizer` goes into a `tf.train.Checkpoint` (directly, through a `self` attribute or a getter "
        "of it). Keras 3's class keeps its loss scale under other names (`dynamic_scale`, `step_counter`, not TF 2.4's "
        "`loss_scale/current_loss_scale` and `loss_scale/good_steps`), so a checkpoint TF 2.4 wrote would no longer "
        "restore its scale; the optimizer is built with `lossscale_compat.KerasLossScaleOptimizer` (TF 2.4's contract, "
        "the same settings), which restores TF 2.4's checkpoints and writes both names. Once no TF 2.4 checkpoint is "
        "left to restore, `keras.mixed_precision.LossScaleOptimizer` takes the same arguments."
    ),
    FINAL_CLASS_SHIM_NOTE: (
        "This names TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer` in a file whose custom loop keeps TF 2.4's "
        "methods (`get_scaled_loss`, `get_unscaled_gradients` or `get_gradients` on an object the codemod could not "
        "rewrite), which Keras 3's class of that name lacks, so it now names "
        "`lossscale_compat.KerasLossScaleOptimizer` (the modern arguments, TF 2.4's methods) and the loop keeps "
        "working. To move to Keras 3 by hand: take gradients of `optimizer.scale_loss(loss)` and pass them to "
        "`apply_gradients`, then use `keras.mixed_precision.LossScaleOptimizer`."
    ),
    LOOP_SHIM_NOTE: (
        "This file's custom loop calls `get_scaled_loss`/`get_unscaled_gradients` on an optimizer the "
        "codemod cannot trace to this call, or sends the unscaled gradients somewhere Keras 3's contract "
        "would change (LSC107, LSC123-LSC126 say where), so the optimizer is built with "
        "`lossscale_compat.KerasLossScaleOptimizer` (TF 2.4's contract, the same settings) rather than "
        "Keras 3's class, and the loop keeps working unchanged."
    ),
    SCALE_READ_NOTE: (
        "Keras 3's loss-scale optimizer has no `loss_scale`: its current scale is the variable `dynamic_scale`, "
        "which exists only once the first step has built the optimizer (before, the scale is `initial_scale`). "
        "The read is now `scale_loss(1.0)`, which gives the current scale as a fresh float32 tensor, as TF 2.4's "
        "`loss_scale` did, before the first step too. With a fixed scale Keras 3 has no loss-scale optimizer: "
        "read the inner optimizer's `loss_scale_factor` there instead."
    ),
    IMPORT_KEPT: (
        "This import (or module alias) names a TF 2.4 mixed-precision module or name that today's TensorFlow lacks, "
        "and it stays because some of its uses were left alone (see their warnings). Instead, migrate those uses "
        "by hand, or run the code unmodified with `lossscale-compat run`."
    ),
    GRADIENTS_CLIPPED: (
        "These unscaled gradients are clipped before `apply_gradients`. Keras 3's `apply_gradients` "
        "takes the scaled gradients and unscales them itself, so clipping there would clip values "
        "`dynamic_scale` times too large and change every step; the file keeps TF 2.4's contract "
        "(LSC120, LSC129, or an optimizer built in another module) and this call stays. To move to "
        "Keras 3 by hand: drop the clipping and pass "
        "`global_clipnorm=`, `clipnorm=` or `clipvalue=` to the inner optimizer, which clips after unscaling."
    ),
    GRADIENTS_NORM_TAKEN: (
        "A norm is taken of these unscaled gradients. Taken of the scaled gradients that Keras 3's "
        "`apply_gradients` wants, it would be `dynamic_scale` times TF 2.4's (inf on a skipped step), so the "
        "file keeps TF 2.4's contract (LSC120, LSC129, or an optimizer built in another module) and this "
        "call stays. To move to Keras 3 by hand: take the norm "
        "of `g / optimizer.scale_loss(1.0)`."
    ),
    GRADIENTS_ACCUMULATED: (
        "These unscaled gradients are accumulated across steps. Scaled gradients, as Keras 3's "
        "`apply_gradients` wants them, mix scales whenever the scale changes between steps, and Keras 3 "
        "checks each call for inf/NaN rather than the sum; the file keeps TF 2.4's contract (LSC120, "
        "LSC129, or an optimizer built in another module) and "
        "this call stays. To move to Keras 3 by hand: use the inner optimizer's "
        "`gradient_accumulation_steps=`, or accumulate `g / optimizer.scale_loss(1.0)` and skip non-finite sums."
    ),
    GRADIENTS_LOGGED: (
        "These unscaled gradients are logged or printed. The scaled gradients Keras 3's `apply_gradients` "
        "wants would log `dynamic_scale` times larger values, so the file keeps TF 2.4's contract (LSC120, "
        "LSC129, or an optimizer built in another module) "
        "and this call stays. To move to Keras 3 by hand: log `g / optimizer.scale_loss(1.0)`."
    ),
    TF1_KEPT_NOTE: (
        "This is TF1 code (a `tf.compat.v1.train.Optimizer`, or a LossScale object that only TF1 APIs "
        "use), which Keras's classes and lossscale_compat's objects do not accept, so it was kept on "
        "TensorFlow's own `tf.compat.v1.mixed_precision` spelling of the same TF 2.4 API, which still "
        "exists. To leave TF1, move to a Keras optimizer wrapped in `keras.mixed_precision.LossScaleOptimizer`."
    ),
    ESCAPING_SHIM_NOTE: (
        "This `LossScaleOptimizer` leaves the module's sight (it is returned, passed on, or stored on "
        "another object), and its users elsewhere may call `get_scaled_loss`, `get_unscaled_gradients` "
        "or `loss_scale`, which Keras 3's class lacks, so it is built with "
        "`lossscale_compat.KerasLossScaleOptimizer` (TF 2.4's contract, the same settings). Once those "
        "users are migrated, `keras.mixed_precision.LossScaleOptimizer` takes the same arguments."
    ),
    SCALE_READ_NOT_PROVEN: (
        "Keras 3's `LossScaleOptimizer` has no `loss_scale` (it raises AttributeError), and this object "
        "is not provably lossscale_compat's class, so the read was left alone. Instead, read "
        "`.scale_loss(1.0)` if it is Keras 3's class (its current scale, before the first step too, where "
        "`.dynamic_scale` does not exist yet), or keep `.loss_scale` if it is lossscale_compat's."
    ),
    CLASS_SHIM_NOTE: (
        "The experimental `LossScaleOptimizer` class is kept as a value here (to be called, or checked with "
        "`isinstance`, elsewhere), so it now names lossscale_compat's class, which takes TF 2.4's arguments "
        "(`loss_scale=`) and keeps TF 2.4's behaviour. To move on, call `keras.mixed_precision.LossScaleOptimizer` "
        "with the modern keyword arguments where the class is called."
    ),
    UNTRACED_LOOP_NOTE: (
        "This object was not traced to its construction (a parameter, an attribute or a rebound name), but "
        "only loss-scale optimizers have `get_scaled_loss`/`get_unscaled_gradients`, and its unscaled "
        "gradients only reach its own `apply_gradients`, so the loop was rewritten for Keras 3: "
        "`get_scaled_loss` became `scale_loss` and `get_unscaled_gradients` was dropped, because "
        "`apply_gradients` unscales by itself. That is right for Keras 3's `LossScaleOptimizer` and for "
        "lossscale_compat's `LossScaleOptimizer`/`KerasLossScaleOptimizer`. Check the object is one of "
        "them (not a project's own class with these method names)."
    ),
    GRAPH_REWRITE_FALLBACK_NOTE: (
        "This optimizer is not provably a Keras or a TF1 one, so the call now uses "
        "`lossscale_compat.enable_mixed_precision_graph_rewrite` with the same arguments, which chooses as TF 2.4 did "
        "when called: a TF1 optimizer gets `tf.compat.v1`'s rewrite; a Keras one is wrapped in lossscale_compat's "
        "`LossScaleOptimizer` (TF 2.4's numbers: `iterations` counts skipped steps, `loss_scale` and "
        "`get_scaled_loss` stay) and the grappler rewrite is turned on. Once the kind is known, write "
        "`keras.mixed_precision.LossScaleOptimizer(opt)` for a Keras optimizer."
    ),
    VALUE_FALLBACK_NOTE: (
        "This TF 2.4 function or class is used as a value here (not called where the codemod can read its "
        "arguments), and today's TensorFlow lacks it, so it now names lossscale_compat's object of the same name, "
        "which behaves as TF 2.4's did wherever it is called. To move on, call the modern API where it is called "
        "(docs/codemod.md, What it rewrites)."
    ),
    GRAPH_REWRITE_SHIM_NOTE: (
        "This graph rewrite's loss scale cannot be proven equivalent to a modern construction (it is only known at "
        "run time, a multiplier other than 2, a fixed scale Keras 3 cannot express here, or `*args`), so the call "
        "now uses "
        "`lossscale_compat.enable_mixed_precision_graph_rewrite` with the same arguments, which wraps the optimizer "
        "in lossscale_compat's `LossScaleOptimizer` with that loss scale and keeps TF 2.4's behaviour for any value."
    ),
    TF24_CALL_SHIM_NOTE: (
        "This loss-scale optimizer is called as only TF 2.4's class took it: `apply_gradients` with an argument after "
        "`grads_and_vars` (TF 2.4 handed `name` on to the inner optimizer positionally, and "
        "`experimental_aggregate_gradients` by keyword; Keras 3's class takes neither, and Keras 2's takes "
        "`skip_gradients_aggregation` second and hands nothing on), or `get_gradients` (neither class has it). So it "
        "is built with `lossscale_compat.KerasLossScaleOptimizer` (the same settings), which takes these calls as "
        "TF 2.4 did. To move on: pass what the inner optimizer's `apply_gradients` needs (a `clip_norm`, say) to it "
        "by keyword, drop `experimental_aggregate_gradients`, and take gradients with a `tf.GradientTape`."
    ),
    TF24_CALL_NOT_PROVEN: (
        "This call is on an object the codemod could not trace to its construction, in a file that uses TF 2.4's "
        "loss-scale optimizer, and the target's class would take it differently from TF 2.4's: an argument after "
        "`grads_and_vars` in `apply_gradients` (TF 2.4 handed `name` on to the inner optimizer positionally, which "
        "Keras 2's class reads as `skip_gradients_aggregation` and Keras 3's refuses; `experimental_aggregate_"
        "gradients` Keras 3's refuses), or `get_gradients` (neither class has it). It was left alone. If the object "
        "is a loss-scale optimizer, build it with `lossscale_compat.KerasLossScaleOptimizer`, which takes these calls "
        "as TF 2.4 did, or pass the inner optimizer's argument to it by keyword and drop the rest."
    ),
    LEGACY_OPTIMIZER_NOTE: (
        "TF 2.4's behaviour of this file depends on TF 2.4's optimizer class, `OptimizerV2`: it defines an optimizer "
        "that overrides one of its methods (`apply_gradients`, `_resource_apply_dense`/`_sparse`, `_create_slots`, "
        "`get_gradients`, ...), calls `get_gradients`, or checkpoints a loss-scale optimizer (TF 2.4's checkpoints "
        "keep slots as `OptimizerV2` does). On Keras 2 today `tf.keras.optimizers.X` is another class that calls none "
        "of those methods, has no `get_gradients` and refuses those checkpoints' slots, so this optimizer is now "
        "`tf.keras.optimizers.legacy.X`: TF 2.4's class, as `lossscale-compat run` gives it. To move on: port the "
        "overrides to `update_step`/`build` and take gradients with a `tf.GradientTape`, then drop `.legacy`."
    ),
    LEGACY_OPTIMIZER_NOT_WRITTEN: (
        "TF 2.4's behaviour of this file depends on TF 2.4's optimizer class, `OptimizerV2` (an override of one of its "
        "methods, `get_gradients`, or a checkpoint of a loss-scale optimizer), and this Keras optimizer could not be "
        "made the legacy one: it is imported by its bare name, or Keras 2 has no legacy form of it (only "
        f"{_listed(_mapping.LEGACY_OPTIMIZER_CLASSES)}). It was left alone, so on Keras 2 it is "
        "today's class, which trains and checkpoints differently. Instead, write `tf.keras.optimizers.legacy.X` "
        "here, or run the file unmodified with `lossscale-compat run`."
    ),
    POLICY_FALLBACK_NOTE: (
        "A modern policy has no `loss_scale`, and this one cannot be dropped provably (a loss scale known only at "
        "run time or other than the default, or a `loss_scale` read of the policy), so the call now builds "
        "`lossscale_compat.Policy` with the same arguments: the modern policy of that name, which keeps TF 2.4's "
        "`loss_scale`, and `compile` of a model under it wraps the optimizer with that loss scale as TF 2.4 did "
        "(lossscale_compat's class, whose `iterations` counts skipped steps). Other models keep the target's rule."
    ),
    CLASS_CHECK_NOTE: (
        "This `isinstance`/`issubclass` checks TF 2.4's experimental `LossScaleOptimizer`, which is gone, so it now "
        "checks the target's `LossScaleOptimizer`, of which every loss-scale optimizer of today's stack is an instance "
        "(lossscale_compat's classes subclass it). Unlike TF 2.4's experimental class, it is also true for a "
        "loss-scale optimizer TF 2.4 built as its non-experimental class: `tf.keras.mixed_precision."
        "LossScaleOptimizer(opt)`, or `compile`'s wrap under a `'mixed_float16'` policy set by name."
    ),
    MODULE_FALLBACK_NOTE: (
        "This import names TF 2.4's `tf.keras.mixed_precision.experimental` module, which is gone, and some of its "
        "uses have no modern rewrite, so it now imports `lossscale_compat.keras_experimental`"
        " under the same name: TF 2.4's `LossScaleOptimizer`, `Policy`, `set_policy`, `global_policy` and "
        "`get_layer_policy`, with TF 2.4's behaviour (a `Policy` keeps its `loss_scale`)."
    ),
    CONFIG_EQUIVALENCE_NOTE: (
        "Comparing two loss-scale optimizers' `get_config()` with `==` fails on Keras 3 (each optimizer has a unique "
        "name, and the modern config spells the loss scale differently), so the comparison now calls "
        "`lossscale_compat.testing.assert_config_equivalent(a, b)`, which passes when both build the same optimizer."
    ),
    CONFIG_COMPARED: (
        "This compares a loss-scale optimizer's `get_config()` with `==` or `!=`, which on Keras 3 never finds two "
        "optimizers equal (each has a unique name, and the modern config spells the loss scale differently), and "
        "the codemod rewrites only `assert a.get_config() == b.get_config()` with no message, or "
        "`self.assertEqual(a.get_config(), b.get_config())`, between two names bound here to loss-scale optimizer "
        "constructions, so it was left alone. Instead, call `lossscale_compat.testing.assert_config_equivalent(a, b)` "
        "to assert they build the same optimizer, or test `lossscale_compat.config_differences(a, b)`: empty when "
        "they do, a line per difference when not."
    ),
    PRIVATE_IMPORT_NOTE: (
        "This imports from a private mixed-precision module: TensorFlow's private Keras ones "
        "(`tensorflow.python.keras`), which are gone (TF <= 2.3's experimental package) or hold TensorFlow's old "
        "internal Keras, whose classes today's Keras does not accept; standalone Keras 2's "
        "`keras.mixed_precision.loss_scale_optimizer`, gone since Keras 2.13; or TF 2.3's "
        "`get_loss_scale_weights` of `tensorflow.python.training.experimental.loss_scale`, gone since TF 2.4. So it "
        "now imports lossscale_compat's names of the same behaviour under the same local names: "
        "`LossScaleOptimizerV1` is lossscale_compat's `LossScaleOptimizer`, TF 2.4's `LossScaleOptimizer` its "
        "`KerasLossScaleOptimizer` (either is its `AnyLossScaleOptimizer` where only `isinstance`/`issubclass` read "
        "it, which is true for the target's class too), `PolicyV1` its `Policy`, and the loss scale's "
        "`get`/`serialize`/`deserialize` and `get_loss_scale_weights` its own. To move on, use the target's "
        "`keras.mixed_precision` names (see docs/codemod.md)."
    ),
    NAME_LEFT: (
        "The codemod left a name the target lacks: this line still names `{0}`, and {1} does not exist on {2} "
        "(recorded from the real packages, codemods/target_names/), so the line fails when it runs (ImportError or "
        "AttributeError), and no rule rewrote it or warned about it. Instead, use the target's own "
        "`keras.mixed_precision` name (docs/codemod.md maps TF 2.4's names), import TF 2.4's name from "
        "`lossscale_compat` (it keeps TF 2.4's behaviour), guard the line with `try`/`except ImportError`, or run "
        "the file unmodified with `lossscale-compat run`."
    ),
    DEVICE_CHECK_DROPPED: (
        "This imported TensorFlow's private `device_compatibility_check` module only to silence its check (the "
        "log message that mixed_float16 may run slowly on this device), and the target has no such module to import "
        "(TF <= 2.3's experimental one is gone; TF 2.4's belongs to TensorFlow's old internal Keras, which the target "
        "does not use), so the import and the statements that only set or called something of it were removed. "
        "Nothing else changes: at most the target's Keras logs its own note about the device."
    ),
    NAME_ASSIGNED: (
        "This assigns to (or deletes) a TF 2.4 mixed-precision name, as code that patched or disabled TF 2.4's API "
        "did. The target has no such name, and rewriting the statement to assign a lossscale_compat name would "
        "change lossscale_compat's class for every module that uses it, so the statement was left alone (through a "
        "module alias kept as lossscale_compat's stand-in module, LSC137, it changes only that module). Instead, "
        "remove the statement, or patch the modern name it stood for by hand if that is what you meant."
    ),
    ITERATIONS_SET_SHIM_NOTE: (
        "This `LossScaleOptimizer` gets a variable as its `iterations` (`optimizer.iterations = global_step`), as TF "
        "2.4's class took it, counting each step in that variable. Keras 3's optimizers have no `iterations` setter "
        "(it raises AttributeError), so the optimizer is built with `lossscale_compat.KerasLossScaleOptimizer` (TF "
        "2.4's contract, the same settings), which takes it. To move to Keras 3's class by hand: drop the assignment "
        "and copy the count instead (`optimizer.iterations.assign(global_step)` before training, "
        "`global_step.assign(optimizer.iterations)` after each step)."
    ),
    CONFIG_COMPARED_UNTRACED: (
        "This compares the `get_config()` of objects the codemod could not trace to their construction (a loop "
        "variable, a parameter, an attribute, an item), in a file that builds loss-scale optimizers, so they may be "
        "ones: on Keras 3 two loss-scale optimizers' configs are never equal (each optimizer has a unique name, and "
        "the modern config spells the loss scale differently), so such a test would fail, or pass wrongly with `!=`. "
        "It was left alone. Instead, where they are loss-scale optimizers, call "
        "`lossscale_compat.testing.assert_config_equivalent(a, b)`, which compares what TF 2.4 compared and ignores "
        "the generated names, or test `lossscale_compat.config_differences(a, b)`."
    ),
    SCALE_CALLED: (
        "This calls `loss_scale()`, TF 2.3's form, where `loss_scale` was a loss-scale object. TF 2.4's `loss_scale` "
        "is the current scale as a tensor, so TF 2.4.0 raised TypeError here (the tensor is not callable), and no "
        "rewrite keeps that; it was left alone. Instead, drop the parentheses, TF 2.4's read of the current scale, and "
        "run the codemod again: on Keras 3 the read becomes `scale_loss(1.0)`."
    ),
    NOT_BYTE_EXACT: (
        "libcst does not reproduce this file byte for byte and the changes could not be spliced "
        "in, so the file was skipped. Instead, migrate it by hand."
    ),
    NOTEBOOK_LAYOUT: (
        "This notebook's JSON layout could not be kept around the changed cells, so the notebook was written in "
        "nbformat's standard layout (indent 1, keys sorted), as Jupyter saves it. Review the diff of the whole file."
    ),
    NOTEBOOK_CELL: (
        "A code cell could not be parsed (after masking magics), so it was left as it is and the other cells were "
        "migrated (with no cell named, the whole notebook was left). Instead, fix the cell or migrate it by hand."
    ),
    IPYTHON_LINE_LEFT: (
        "This line is {}, which IPython reads, not Python, and it names a TF 2.4 loss-scaling API: it was left as it "
        "is (and cannot carry an annotation without changing what it does). Instead, write the modern name in it by "
        "hand (docs/codemod.md's mapping table), or drop the line."
    ),
    NOTEBOOK_CELL_LEFT: (
        "This cell names a TF 2.4 loss-scaling API but was left as it is: {}. "
        "Instead, migrate it by hand, or make it a code cell and run again."
    ),
}

# One line for each code (what happened; the way out), shown by default, in `--annotate` comments and as GitHub
# annotations' titles; `--explain CODE` and `--verbose` give its MESSAGES text. Every code needs both (a test fails
# on a code without a short text), and a short text names no detail, so it reads the same in a comment.
SHORT_LIMIT = 72
SHORT = {
    AMBIGUOUS_NAME: "name rebound or ambiguous here; migrate by hand",
    STAR_ARGS: "*args/**kwargs; migrate by hand",
    POLICY_LOSS_SCALE: "reads the global policy's loss_scale; migrate by hand",
    UNSCALED_GRADIENTS_USED: "unscaled gradients used elsewhere; TF 2.4's contract kept",
    GRAPH_REWRITE_NOTE: "the graph rewrite is gone; the optimizer is wrapped explicitly",
    SHIM_NOTE: "no modern equivalent; now lossscale_compat's class",
    UNSUPPORTED_USE: "no rule for this use; migrate by hand",
    NAME_CLASH: "the modern name would clash here; migrate by hand",
    BAD_ARGUMENTS: "arguments do not match TF 2.4's signature; left alone",
    RECEIVER_NOT_PROVEN: "optimizer not traced; loop left alone: rewrite it by hand (scale_loss)",
    DISABLE_VALUE_USED: "disable_mixed_precision_graph_rewrite used as a value; left alone",
    TF1_LOSS_SCALE_OPTIMIZER: "TF1 MixedPrecisionLossScaleOptimizer; no modern equivalent",
    DISABLE_REMOVED_NOTE: "the graph rewrite is gone; nothing to disable",
    ITERATIONS_NOTE: "Keras 3: skips don't advance iterations; KerasLossScaleOptimizer does",
    OPTIMIZER_SHIM_NOTE: "scale not provably modern; lossscale_compat's optimizer kept",
    LOOP_SHIM_NOTE: "custom loop: KerasLossScaleOptimizer keeps TF 2.4's contract",
    SCALE_READ_NOTE: "loss_scale read now scale_loss(1.0), the current scale",
    IMPORT_KEPT: "import kept for uses left alone; migrate them, or use `run`",
    GRADIENTS_CLIPPED: "unscaled gradients clipped before apply_gradients",
    GRADIENTS_NORM_TAKEN: "a norm is taken of the unscaled gradients",
    GRADIENTS_ACCUMULATED: "unscaled gradients accumulated across steps",
    GRADIENTS_LOGGED: "unscaled gradients logged or printed",
    TF1_KEPT_NOTE: "TF1 code kept on tf.compat.v1.mixed_precision",
    ESCAPING_SHIM_NOTE: "optimizer leaves this module; KerasLossScaleOptimizer kept",
    SCALE_READ_NOT_PROVEN: "loss_scale of an optimizer not proven ours; Keras 3: .scale_loss(1.0)",
    CLASS_SHIM_NOTE: "class kept as a value; now lossscale_compat's class",
    UNTRACED_LOOP_NOTE: "untraced optimizer's loop rewritten for Keras 3; check it",
    GRAPH_REWRITE_FALLBACK_NOTE: "graph rewrite now lossscale_compat's run-time fallback",
    POLICY_FALLBACK_NOTE: "Policy with a loss scale; now lossscale_compat.Policy",
    CLASS_CHECK_NOTE: "isinstance now checks the target's LossScaleOptimizer",
    MODULE_FALLBACK_NOTE: "experimental module; now lossscale_compat.keras_experimental",
    CONFIG_EQUIVALENCE_NOTE: "get_config() == now assert_config_equivalent",
    CONFIG_COMPARED: "get_config() ==: never equal on Keras 3; use assert_config_equivalent",
    PRIVATE_IMPORT_NOTE: "private Keras import; now lossscale_compat's names",
    UNSCALED_APPLY_SHIM_NOTE: "apply_gradients without a scaled loss; TF 2.4's class kept",
    ITERATIONS_READ_NOTE: "Keras 3: iterations omits skipped steps; KerasLossScaleOptimizer counts",
    GET_GRADIENTS_GONE: "no get_gradients on Keras 3; use GradientTape or KerasLossScaleOptimizer",
    CHECKPOINT_SHIM_NOTE: "checkpointed: KerasLossScaleOptimizer keeps TF 2.4's names",
    FINAL_CLASS_SHIM_NOTE: "now KerasLossScaleOptimizer: the loop keeps TF 2.4's methods",
    VALUE_FALLBACK_NOTE: "used as a value; now lossscale_compat's object",
    GRAPH_REWRITE_SHIM_NOTE: "graph rewrite kept on lossscale_compat (scale not provable)",
    TF24_CALL_SHIM_NOTE: "called as only TF 2.4's class took it; KerasLossScaleOptimizer kept",
    TF24_CALL_NOT_PROVEN: "untraced optimizer called as only TF 2.4's took it; check it, left alone",
    NAME_LEFT: "still names something the target lacks; use the target's name",
    DEVICE_CHECK_DROPPED: "private device check import removed; nothing else changes",
    CONFIG_COMPARED_UNTRACED: "get_config() of untraced objects compared; use assert_config_equivalent",
    LEGACY_OPTIMIZER_NOTE: "TF 2.4 code needs OptimizerV2: now tf.keras.optimizers.legacy",
    LEGACY_OPTIMIZER_NOT_WRITTEN: "TF 2.4 code needs OptimizerV2; write tf.keras.optimizers.legacy here",
    NAME_ASSIGNED: "TF 2.4 name assigned to or deleted; left alone: remove it by hand",
    ITERATIONS_SET_SHIM_NOTE: "iterations set: no setter on Keras 3; KerasLossScaleOptimizer kept",
    SCALE_CALLED: "loss_scale() is TF 2.3's call; TF 2.4 raised TypeError: drop the ()",
    NOT_BYTE_EXACT: "not reproducible byte for byte; file skipped, migrate it by hand",
    NOTEBOOK_LAYOUT: "layout not kept; notebook rewritten in Jupyter's layout: review the diff",
    NOTEBOOK_CELL: "a cell could not be parsed; fix the cell or migrate it by hand",
    IPYTHON_LINE_LEFT: "IPython line names the TF 2.4 API; left as it is: rewrite it by hand",
    NOTEBOOK_CELL_LEFT: "cell names the TF 2.4 API but is not code; migrate it by hand",
}


# The notes at a site the codemod writes with a lossscale_compat name (its optimizer class, a run-time fallback, a loss
# scale, its testing helper): the whole set of ways to the shim, listed in docs/codemod.md's "What goes to the shim".
SHIM_CODES = frozenset(
    {
        SHIM_NOTE,
        OPTIMIZER_SHIM_NOTE,
        LOOP_SHIM_NOTE,
        ESCAPING_SHIM_NOTE,
        CLASS_SHIM_NOTE,
        GRAPH_REWRITE_FALLBACK_NOTE,
        POLICY_FALLBACK_NOTE,
        MODULE_FALLBACK_NOTE,
        CONFIG_EQUIVALENCE_NOTE,
        PRIVATE_IMPORT_NOTE,
        UNSCALED_APPLY_SHIM_NOTE,
        CHECKPOINT_SHIM_NOTE,
        FINAL_CLASS_SHIM_NOTE,
        VALUE_FALLBACK_NOTE,
        GRAPH_REWRITE_SHIM_NOTE,
        TF24_CALL_SHIM_NOTE,
        ITERATIONS_SET_SHIM_NOTE,
    }
)

# The findings a tracing limit causes (the codemod did not follow an object to its construction): each message ends
# with the line that blocked the trace and the one edit that unlocks the modern rewrite (`_blockers.detail`).
BLOCKED_CODES = frozenset(
    {
        AMBIGUOUS_NAME,
        RECEIVER_NOT_PROVEN,
        LOOP_SHIM_NOTE,
        SCALE_READ_NOT_PROVEN,
        UNTRACED_LOOP_NOTE,
        TF24_CALL_NOT_PROVEN,
    }
)
# What a finding of a `BLOCKED_CODES` code says where no blocking line is known: the edit that unlocks the rewrite.
UNLOCK_BY_CODE = {
    code: "To unlock the rewrite, import the TF 2.4 module or name once under one name, and bind other values under "
    "other names."
    if code == AMBIGUOUS_NAME
    else "To unlock the modern rewrite, build the LossScaleOptimizer in this module and bind it once, to a name or a "
    "`self` attribute that the code here reads."
    for code in BLOCKED_CODES
}


def docs_anchor(code: str) -> str:
    """Where `code` is explained in the repository's docs: its row of docs/codemod.md's warning-code table."""
    return f"docs/codemod.md#{code.lower()}"


# Codes that only annotate a rewrite; every other warning means a person has to look.
NOTE_CODES = frozenset(
    {
        GRAPH_REWRITE_NOTE,
        SHIM_NOTE,
        DISABLE_REMOVED_NOTE,
        ITERATIONS_NOTE,
        ITERATIONS_READ_NOTE,
        CHECKPOINT_SHIM_NOTE,
        ITERATIONS_SET_SHIM_NOTE,
        FINAL_CLASS_SHIM_NOTE,
        OPTIMIZER_SHIM_NOTE,
        LOOP_SHIM_NOTE,
        UNSCALED_APPLY_SHIM_NOTE,
        SCALE_READ_NOTE,
        UNSCALED_GRADIENTS_USED,
        GRADIENTS_CLIPPED,
        GRADIENTS_NORM_TAKEN,
        GRADIENTS_ACCUMULATED,
        GRADIENTS_LOGGED,
        TF1_KEPT_NOTE,
        ESCAPING_SHIM_NOTE,
        CLASS_SHIM_NOTE,
        UNTRACED_LOOP_NOTE,
        GRAPH_REWRITE_FALLBACK_NOTE,
        GRAPH_REWRITE_SHIM_NOTE,
        TF24_CALL_SHIM_NOTE,
        VALUE_FALLBACK_NOTE,
        POLICY_FALLBACK_NOTE,
        CLASS_CHECK_NOTE,
        MODULE_FALLBACK_NOTE,
        CONFIG_EQUIVALENCE_NOTE,
        PRIVATE_IMPORT_NOTE,
        DEVICE_CHECK_DROPPED,
        LEGACY_OPTIMIZER_NOTE,
    }
)


@dataclasses.dataclass(frozen=True)
class Finding:
    """One warning at a 1-based line and 0-based column (in a notebook, within code cell `cell`)."""

    line: int
    col: int
    code: str
    cell: int | None = None
    """0-based index into a notebook's `cells`; None in a Python file or for the whole notebook."""
    detail: tuple[str, ...] = ()
    """What the code's text names (LSC150: the name, its missing part, the stacks lacking it); empty for the rest."""

    @property
    def message(self) -> str:
        """Returns the text of this finding's code, with its `detail` filled in (for `BLOCKED_CODES`, added)."""
        if self.code in BLOCKED_CODES:
            return f"{MESSAGES[self.code]} {self.detail[0] if self.detail else UNLOCK_BY_CODE[self.code]}"
        return MESSAGES[self.code].format(*self.detail) if self.detail else MESSAGES[self.code]

    @property
    def short(self) -> str:
        """Returns the one-line text of this finding's code."""
        return SHORT[self.code]

    def as_dict(self, notebook: bool = False) -> dict:
        """Returns the report form of this finding (line and col 1-based; `cell` in notebooks): both texts."""
        out = {
            "line": self.line,
            "col": self.col + 1,
            "code": self.code,
            "short": self.short,
            "message": self.message,
            "docs": docs_anchor(self.code),
        }
        if notebook:
            out["cell"] = self.cell
        return out


# What LSC150's text names, shown where no finding fills it in (`--explain`).
_DETAIL_PLACEHOLDERS = {NAME_LEFT: ("NAME", "its last part", "the target")}


def explain(code: str) -> str | None:
    """The full explanation of `code` (any case) for `--explain`: its kind, short text, message and docs anchor."""
    code = code.strip().upper()
    if code not in MESSAGES:
        return None
    kind = "note" if code in NOTE_CODES else "needs a person"
    message = MESSAGES[code].format(*_DETAIL_PLACEHOLDERS[code]) if code in _DETAIL_PLACEHOLDERS else MESSAGES[code]
    if code in BLOCKED_CODES:
        message += " (At each finding: the line that blocked the trace, and the one edit that unlocks the rewrite.)"
    wrapped = textwrap.fill(message, width=100, break_long_words=False, break_on_hyphens=False)
    return f"{code} ({kind}): {SHORT[code]}\n\n{wrapped}\n\nDocs: {docs_anchor(code)}\n"
