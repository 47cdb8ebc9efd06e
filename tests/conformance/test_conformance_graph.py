"""TF 2.4.0's Keras loss-scaling tests in their TF1 graph-mode variant (tests/goldens/graph_programs.py), run in
legacy mode and compared with TF 2.4.0's own run (tests/goldens/graph.json).

On Keras 2 stacks they run with TF 2.4's optimizers (`tf.keras.optimizers.legacy`), the only Keras 2 optimizers
with a TF1 graph mode. Keras 3 has no TF1 graph mode: there a program must either give TF 2.4's result or stop at
lossscale_compat's error naming the way out, and is then reported as out of reach.
"""

import json
import pathlib

import pytest
import tensorflow as tf

import conformance_programs  # tests/goldens/
import graph_programs
import lossscale_compat
from lossscale_compat import _flavour
from test_conformance_programs import same

GOLDENS = json.loads((pathlib.Path(graph_programs.__file__).parent / "graph.json").read_text())["cases"]


@pytest.fixture
def tf24_optimizers():
    """Legacy mode as the autouse fixture sets it up, but with TF 2.4's optimizers where Keras has them."""
    lossscale_compat.uninstall()
    lossscale_compat.install(tf24_optimizers=_flavour.keras_has_tf1_graph_mode())
    yield
    lossscale_compat.uninstall()
    lossscale_compat.install()


def case_params():
    return [pytest.param(name, id=name, marks=pytest.mark.tf24_mirror(tf24_file, tf24_test))
            for name, (tf24_file, tf24_test, _) in sorted(graph_programs.PROGRAMS.items())]


@pytest.mark.parametrize("name", case_params())
def test_graph_program_runs_as_on_tf24(name, tf24_optimizers):
    """The program's result in a TF1 graph equals TF 2.4.0's; on Keras 3, or it stops at a clear error."""
    ours = conformance_programs.attempt(lambda: graph_programs.run_program(tf, name))
    if same(ours, GOLDENS[name]["result"]):
        return
    if not _flavour.keras_has_tf1_graph_mode():
        kind, message = ours.get("error", ("no error", ""))
        assert kind == "RuntimeError" and "TF1 graph mode" in message and "TF_USE_LEGACY_KERAS=1" in message, ours
        pytest.skip("out of reach on Keras 3, which has no TF1 graph mode; way out: TF_USE_LEGACY_KERAS=1 (tf_keras)")
    assert ours == GOLDENS[name]["result"]


def test_every_graph_program_was_recorded_on_tf24():
    """Each program has TF 2.4.0's result, recorded for the TF 2.4 test it names."""
    assert set(GOLDENS) == set(graph_programs.PROGRAMS)
    for name, (tf24_file, tf24_test, _) in graph_programs.PROGRAMS.items():
        assert (GOLDENS[name]["tf24_file"], GOLDENS[name]["tf24_test"]) == (tf24_file, tf24_test)
