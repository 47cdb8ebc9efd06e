"""`restore_tf24_checkpoint` gives today's optimizers (whose hyperparameters are floats) the checkpoint's
hyperparameters, as TF 2.4's restore overrode the constructor's: the next steps are TF 2.4.0's."""

import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import OPTIMIZER_GOLDENS, assert_states_match, build_optimizer, linear_model, train

from lossscale_compat import _flavour, restore_tf24_checkpoint

CASES = [c for c in OPTIMIZER_GOLDENS["checkpoint"] if c["inner"]["config"].get("momentum")]


def restored(case, **config):
    """The case's model and optimizer over today's optimizer class, built with `config`, restored from TF 2.4.0."""
    model = linear_model(case)
    inner = dict(case["inner"], config=dict(case["inner"]["config"], **config))
    optimizer = build_optimizer(case["form"], inner, _flavour.STACK_OPTIMIZERS)
    keys = restore_tf24_checkpoint(str(GOLDEN_DIR / case["path"]), model=model, optimizer=optimizer)
    return model, optimizer, keys


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_checkpoints_momentum_wins_over_the_constructors(case):
    assert case["inner"]["config"]["momentum"] != 0.5
    model, optimizer, keys = restored(case, momentum=0.5)
    assert "optimizer/momentum/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert optimizer.inner_optimizer.momentum == pytest.approx(case["inner"]["config"]["momentum"])
    assert_states_match(case["continued"], train(model, optimizer, case["data_after"]["batches"]))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_hyperparameter_the_optimizer_lacks_refuses_the_whole_restore(case):
    """Adam has no momentum: one error names it, and nothing is assigned (all or nothing)."""
    model = linear_model(case)
    optimizer = build_optimizer(case["form"], {"class_name": "Adam", "config": {"learning_rate": 0.1}},
                                _flavour.STACK_OPTIMIZERS)
    before = [v.numpy().tolist() for v in model.trainable_variables]
    with pytest.raises(ValueError, match=r"hyperparameter momentum=0\.9.*has no 'momentum' setting"):
        restore_tf24_checkpoint(str(GOLDEN_DIR / case["path"]), model=model, optimizer=optimizer)
    assert [v.numpy().tolist() for v in model.trainable_variables] == before
    assert int(optimizer.iterations) == 0
