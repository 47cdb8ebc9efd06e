"""rules/site: what a rule is given. `Site.bound()` binds a call's arguments to TF 2.4's parameter names, as Python
would, or refuses with the code a rule's refusal gives (the rules' before/after tests show where that leads)."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from lossscale_compat import _mapping
from lossscale_compat.codemods import _scan
from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._values import Unsafe
from lossscale_compat.codemods.rules.site import PARAMETERS, Site


def _site(arguments: str, name: str = "tf.keras.mixed_precision.experimental.LossScaleOptimizer") -> Site:
    """The one site of `name(arguments)`, as `_decide` builds it."""
    source = f"import tensorflow as tf\nx = {name}({arguments})\n"
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    facts = _scan.collect_facts(module, source.encode(), lambda: wrapper.resolve(PositionProvider))
    [(node, old)] = facts.sites
    call = facts.parent(node)
    assert isinstance(call, cst.Call)
    return Site(facts, "keras3", node, _mapping.BY_OLD_NAME[old], call, frozenset())


def _texts(bound: dict[str, cst.Arg]) -> dict[str, str]:
    return {name: cst.Module([]).code_for_node(arg.value) for name, arg in bound.items()}


@pytest.mark.parametrize(
    "arguments",
    ["opt, 'dynamic'", "opt, loss_scale='dynamic'", "loss_scale='dynamic', optimizer=opt"],
)
def test_bound_names_the_arguments_by_tf24s_parameters(arguments):
    assert _texts(_site(arguments).bound()) == {"optimizer": "opt", "loss_scale": "'dynamic'"}


def test_bound_takes_each_rules_parameters_from_its_row():
    site = _site("'mixed_float16', None", "tf.keras.mixed_precision.experimental.Policy")
    assert site.row.rule == "policy"
    assert _texts(site.bound()) == dict(zip(PARAMETERS["policy"][0], ["'mixed_float16'", "None"]))


@pytest.mark.parametrize(
    "arguments, code",
    [
        ("*args", w.STAR_ARGS),
        ("opt, **kwargs", w.STAR_ARGS),
        ("opt", w.BAD_ARGUMENTS),  # TF 2.4's experimental class required the loss scale
        ("opt, 'dynamic', 3", w.BAD_ARGUMENTS),
        ("opt, 'dynamic', optimizer=opt", w.BAD_ARGUMENTS),
        ("opt, scale='dynamic'", w.BAD_ARGUMENTS),
    ],
)
def test_bound_refuses_arguments_it_cannot_bind_with_the_code_that_says_why(arguments, code):
    with pytest.raises(Unsafe) as refused:
        _site(arguments).bound()
    assert refused.value.code == code
