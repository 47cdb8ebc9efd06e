"""Nothing in a file runs by loading it: Lambda layers and serialized functions are refused unless asked for."""

import json

import pytest
import tensorflow as tf

import lossscale_compat
from lossscale_compat import _equivalent_cli, _safe_config


def lambda_model_h5(tmp_path):
    """An .h5 of a compiled model whose Lambda layer, when it runs, leaves `marker`; built on this stack."""
    marker = tmp_path / "ran"
    touch = eval(f"lambda x: (__import__('pathlib').Path({str(marker)!r}).touch(), x)[1]")  # noqa: S307
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Lambda(touch), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    path = str(tmp_path / "lambda.h5")
    model.save(path)
    marker.unlink(missing_ok=True)  # built and called while saving, above
    return path, marker


def test_load_tf24_h5_refuses_a_lambda_layer_and_runs_nothing(tmp_path):
    path, marker = lambda_model_h5(tmp_path)
    with pytest.raises(ValueError, match=r"holds code that loading it would run: .*\(Lambda\).*pass `safe_mode=False`"):
        lossscale_compat.load_tf24_h5(path)
    assert not marker.exists()


def test_load_tf24_h5_with_safe_mode_false_runs_the_file_as_asked(tmp_path):
    """The control: the file above really does run code when loaded, so the refusal is what kept the marker away."""
    path, marker = lambda_model_h5(tmp_path)
    model = lossscale_compat.load_tf24_h5(path, safe_mode=False)
    assert marker.exists()
    assert [type(layer).__name__ for layer in model.layers] == ["Lambda", "Dense"]


def serialized_lambda_config():
    """A TF 2.4 loss-scale optimizer config whose learning rate is a serialized function (Keras' `__lambda__`)."""
    return {
        "class_name": "LossScaleOptimizer",
        "config": {
            "inner_optimizer": {
                "class_name": "SGD",
                "config": {"learning_rate": {"class_name": "__lambda__", "config": {"code": "AAAA"}}},
            },
            "dynamic": True,
        },
    }


def test_equivalent_refuses_a_config_holding_a_serialized_function(tmp_path, capsys):
    path = tmp_path / "optimizer.json"
    path.write_text(json.dumps(serialized_lambda_config()))
    code = _equivalent_cli.main([str(path), str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (_equivalent_cli.EXIT_ERROR, "")
    assert "holds code that loading it would run" in err and "pass `--no-safe-mode`" in err


def test_equivalent_with_no_safe_mode_hands_the_config_to_keras(tmp_path, capsys):
    path = tmp_path / "optimizer.json"
    path.write_text(json.dumps(serialized_lambda_config()))
    _equivalent_cli.main(["--no-safe-mode", str(path), str(path)])
    assert "holds code" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "config, where",
    [
        ({"layers": [{"class_name": "Dense"}, {"class_name": "Lambda", "config": {}}]}, "config.layers[1] (Lambda)"),
        ({"loss": {"function": ["bytecode", None, None], "function_type": "lambda"}}, "config.loss (a serialized"),
        ({"class_name": "SGD", "config": {"learning_rate": 0.1}}, None),
    ],
)
def test_code_in_config_finds_lambdas_at_any_depth(config, where):
    found = _safe_config.code_in_config(config)
    assert found == where if where is None else found.startswith(where)


def test_code_in_config_reads_a_config_deeper_than_the_recursion_limit():
    config: dict = {"class_name": "Lambda"}
    for _ in range(100_000):
        config = {"a": config}
    assert _safe_config.code_in_config(config).endswith("(Lambda)")


def test_load_tf24_h5_refuses_tf24s_own_lambda_layer_file(tmp_path, monkeypatch):
    """TF 2.4.0's file (tests/recorders/record_tf24_lambda_h5.py): its Lambda layer, in TF 2.4's format, is refused."""
    from tf24_goldens import GOLDEN_DIR

    monkeypatch.chdir(tmp_path)  # where the lambda would leave its marker
    with pytest.raises(ValueError, match=r"tf24_lambda_model.h5 holds code .*\(Lambda\).*safe_mode=False"):
        lossscale_compat.load_tf24_h5(str(GOLDEN_DIR / "tf24_lambda_model.h5"))
    assert not (tmp_path / "lossscale_compat_lambda_ran").exists()
