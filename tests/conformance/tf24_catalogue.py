"""Every test of TF 2.4.0's own test files for the loss-scaling API, and why a test is not mirrored, if it is not.

Test names are facts about TensorFlow's files (read from tensorflow/tensorflow, the commits in SOURCES);
nothing of their code is here. A test with no entry in NOT_MIRRORED has at least one test of ours whose
docstring or `tf24_mirror` mark names it; docs/tf24_conformance.md shows how each ran on each stack.
"""

import re

LOSS_SCALE = "training/experimental/loss_scale_test.py"
V1_LSO = "training/experimental/loss_scale_optimizer_test.py"
KERAS_LSO = "keras/mixed_precision/loss_scale_optimizer_test.py"
POLICY = "keras/mixed_precision/policy_test.py"
KERAS = "keras/mixed_precision/keras_test.py"

SOURCES = {
    LOSS_SCALE: (
        "tensorflow/tensorflow at commit 0aa06986aa4eb2fcb5b3f21cd444f55928eb52ff, a TF 2.x-era revision of the file\n"
        "with no functional change to it between TF 2.2 and 2.5"
    ),
    V1_LSO: "tensorflow/tensorflow 0004ac98",
    KERAS_LSO: "tensorflow/tensorflow 0029a3c3 (about r2.5: two tests there are newer than 2.4.0, marked below)",
    POLICY: "tensorflow/tensorflow 1d6da212 (the loss-scale and set_policy tests)",
    KERAS: "a TF 2.4-era copy read through the code index (the loss-scale tests of KerasModelTest)",
}

TESTS = {
    LOSS_SCALE: [
        "FixedLossScaleTest.test_basic", "FixedLossScaleTest.test_serialization", "FixedLossScaleTest.test_call_type",
        "DynamicLossScaleTest.test_increase", "DynamicLossScaleTest.test_keep_increasing_until_capped",
        "DynamicLossScaleTest.test_decrease_every_step", "DynamicLossScaleTest.test_keep_decreasing_until_one",
        "DynamicLossScaleTest.test_nan_clear_good_step", "DynamicLossScaleTest.test_trigger_loss_scale_update_each_step",
        "DynamicLossScaleTest.test_alternating_good_and_bad_gradients_trigger_each_step",
        "DynamicLossScaleTest.test_alternating_good_and_bad_gradients_trigger_every_other_step",
        "DynamicLossScaleTest.test_nondefault_multiplier", "DynamicLossScaleTest.test_random_mix_good_and_bad_gradients",
        "DynamicLossScaleTest.test_single_tensor_gradient", "DynamicLossScaleTest.test_serialization",
        "DynamicLossScaleTest.test_update_with_none_gradients", "DynamicLossScaleTest.test_get",
        "DynamicLossScaleTest.test_call_type",
    ],
    V1_LSO: [
        "testFixedLossScaleAppliedToLossWithMinimize", "testFixedLossScaleAppliedToLossWithGetGradients",
        "testDynamicLossScale", "testDynamicUpdate", "testDynamicLossScaleWithSlots", "testCheckpoint",
        "testPassingNoneToLossScale",
    ],
    KERAS_LSO: [
        "testFixedLossScaleAppliedToLossWithMinimize", "testFixedLossScaleAppliedToLossWithGetGradients",
        "testDynamicAttrsWithFixedLossScale", "testGetScaledLoss", "testGetUnscaledGradients",
        "testGetUnscaledSparseGradients", "testDynamicLossScale", "testDynamicLossScaleDefaultValues", "testClipping",
        "testDynamicUpdate", "testDynamicLossScaleWithFloat16Loss", "testNanOnOneReplicaOnly", "testCustomAggregater",
        "testDynamicLossScaleWithSlots", "testIterations", "testIterationsIncremented", "testWeightMethods",
        "testHyperParametersExposed", "testArbitraryAttributesNotExposed", "testDir",
        "testApplyGradientsGetsUnwrappedTensors", "testV1Optimizer", "testPassingV1LossScale",
        "testPassingV1LossScaleErrors", "testCheckpoint", "testGetConfigFixed", "testGetConfigDynamic",
        "test_from_config_with_invalid_multiplier", "testSerializationWithBuiltInOptimizer",
        "testSerializationWithCustomOptimizer", "testUnsupportedStrategy", "testInvalidArgsWithFixedLossScale",
        "testDynamicMustBeBool",
    ],
    POLICY: [
        "test_repr", "test_loss_scale", "test_global_policy", "test_global_policy_dtype_error",
        "test_loss_scale_warning", "test_serialization", "test_error_if_graph_rewrite_enabled",
    ],
    KERAS: [
        "test_fixed_loss_scaling", "test_advanced_model", "test_dynamic_loss_scaling",
        "test_loss_scale_optimizer_overrides_policy_v1_loss_scale", "test_policy_v1_without_loss_scale",
        "test_pass_invalid_optimizer_with_loss_scaling", "test_save_slot_variables_with_autocast_vars",
        "test_save_weights_with_dynamic_loss_scaling", "test_restore_old_loss_scale_checkpoint",
        "test_restore_old_saved_model", "test_save_model_with_dynamic_loss_scaling",
    ],
}

# (file, test) -> why there is no test of ours for it, and the way out where there is one.
NOT_MIRRORED = {
    (KERAS_LSO, "testNanOnOneReplicaOnly"): "not in TF 2.4.0 (added for 2.5, GPU only); TF 2.4.0's run with a NaN on one "
    "of 2 CPU replicas is compared in tests/optimizer/test_training.py::test_mirrored_strategy_matches_tf24",
    (KERAS, "test_advanced_model"): "its loss-scale variant is a fixed scale under fit, which "
    "test_fixed_loss_scaling covers; its custom regularised layers are not the loss-scaling API",
    (KERAS, "test_pass_invalid_optimizer_with_loss_scaling"): "not applicable, it passes TF 2.4's private "
    "optimizer_v1.SGD, which has no public TF 2.4 name",
    (KERAS, "test_restore_old_saved_model"): "not applicable, it loads a SavedModel that TF's own test data holds",
}

# How our docstrings name the files ("Mirrors TF 2.4's <name>: <test>").
FILE_ALIASES = {
    "loss_scale_test.py": LOSS_SCALE,
    "loss_scale_optimizer_test.py": KERAS_LSO,
    **{path: path for path in TESTS},
}

MIRRORS = re.compile(r"Mirrors TF 2\.4's (?P<file>[\w/.]+): (?P<tests>[^\n]+(?:\n[ \t]+[^\n]+)*)")


def mirrored_tests(docstring):
    """The (file, test) pairs a docstring's "Mirrors TF 2.4's <file>: <test>[; <test>]" line names."""
    found = []
    for match in MIRRORS.finditer(docstring or ""):
        path = FILE_ALIASES.get(match["file"])
        if path is None:
            continue
        for part in match["tests"].split(";"):
            words = re.findall(r"[A-Za-z_]\w*", part)
            names = [w for w in words if w.startswith("test")]
            if not names:
                continue
            name = names[0]
            if path == LOSS_SCALE:
                name = ("FixedLossScaleTest." if "FixedLossScale" in words else "DynamicLossScaleTest.") + name
            if name in TESTS[path]:
                found.append((path, name))
    return found
