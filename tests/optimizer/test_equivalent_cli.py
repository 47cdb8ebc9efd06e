"""`lossscale-compat equivalent OLD NEW` on TF 2.4.0's saved files and on files saved on this stack."""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import KERAS3

from lossscale_compat import _equivalent_cli
from lossscale_compat.testing import modern_equivalent

SAVED_MODEL = str(GOLDEN_DIR / "tf24_lso_savedmodel")
OPTIMIZER_JSON = str(GOLDEN_DIR / "tf24_lso_optimizer.json")
H5 = str(GOLDEN_DIR / "tf24_lso_model.h5")


def run(capsys, *argv):
    code = _equivalent_cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tf24_saved_model_and_its_serialized_optimizer_are_equivalent(capsys):
    code, out, err = run(capsys, SAVED_MODEL, OPTIMIZER_JSON)
    assert (code, err) == (0, "")
    assert "equivalent" in out


def test_different_optimizers_exit_1_with_every_difference(capsys):
    """The H5 golden was saved with another dynamic scale (4, growing every 2 steps) than the SavedModel's."""
    code, out, err = run(capsys, SAVED_MODEL, H5)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == "The optimizers are not equivalent:"
    assert lines[1:] == ["  dynamic_growth_steps: 100 (old) != 2 (new)", "  initial_scale: 256.0 (old) != 4.0 (new)"]


def compiled_model(optimizer):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer=optimizer, loss="mse")
    return model


def test_a_keras_file_of_the_modern_equivalent_is_equivalent_to_the_tf24_files(capsys, tmp_path):
    tf24_config = json.loads((GOLDEN_DIR / "tf24_lso_optimizer.json").read_text())
    path = str(tmp_path / "modern.keras")
    compiled_model(modern_equivalent(tf24_config)).save(path)
    assert run(capsys, path, SAVED_MODEL)[0] == 0
    other = str(tmp_path / "other.keras")
    compiled_model(tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05, momentum=0.9))).save(other)
    code, out, _ = run(capsys, other, OPTIMIZER_JSON)
    assert code == 1 and "initial_scale: 32768.0 (old) != 256.0 (new)" in out


def test_a_model_config_json_with_its_training_config_is_read(capsys, tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"training_config": {"optimizer_config": json.loads(
        (GOLDEN_DIR / "tf24_lso_optimizer.json").read_text())}}))
    assert run(capsys, str(path), SAVED_MODEL)[0] == 0


@pytest.mark.parametrize("make, says", [
    pytest.param(lambda tmp: str(tmp / "missing.h5"), "no such file or directory", id="missing"),
    pytest.param(lambda tmp: (tmp / "junk.json").write_text("{not json") and str(tmp / "junk.json"),
                 "not a .h5, .keras or JSON file", id="not JSON"),
    pytest.param(lambda tmp: (tmp / "list.json").write_text("[1]") and str(tmp / "list.json"),
                 "expected a JSON object", id="a JSON list"),
    pytest.param(lambda tmp: (tmp / "empty.keras").write_bytes(b"PK\x03\x04junk") and str(tmp / "empty.keras"),
                 "not a .keras file", id="broken zip"),
    pytest.param(lambda tmp: (tmp / "dir").mkdir() or str(tmp / "dir"), "without saved_model.pb", id="a directory"),
    pytest.param(lambda tmp: (tmp / "model.json").write_text('{"training_config": null}') and str(tmp / "model.json"),
                 "holds no optimizer config", id="uncompiled"),
    pytest.param(lambda tmp: (tmp / "bad.json").write_text('{"class_name": "Nope", "config": {}}') and
                 str(tmp / "bad.json"), "Unknown optimizer: Nope", id="unknown optimizer"),
    pytest.param(lambda tmp: (tmp / "deep.json").write_text("[" * 100_000 + "]" * 100_000) and str(tmp / "deep.json"),
                 "deep.json: its JSON is nested too deeply", id="nested 100,000 deep"),
    pytest.param(lambda tmp: os.mkfifo(tmp / "fifo.json") or str(tmp / "fifo.json"),
                 "fifo.json: not a regular file (a FIFO)", id="a FIFO"),
    pytest.param(lambda tmp: "/dev/zero", "/dev/zero: not a regular file (a device)", id="a device"),
    pytest.param(lambda tmp: _with_extra_inner_setting(tmp), "extra.json: cannot load an optimizer config: Cannot "
                 "load this SGD config: ", id="an extra key"),
])
def test_unreadable_side_is_one_line_and_exit_2(capsys, tmp_path, make, says):
    code, out, err = run(capsys, make(tmp_path), OPTIMIZER_JSON)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("lossscale-compat equivalent: ") and says in err, err
    assert "Unknown optimizer: SGD" not in err


def _with_extra_inner_setting(tmp):
    config = json.loads((GOLDEN_DIR / "tf24_lso_optimizer.json").read_text())
    config["config"]["inner_optimizer"]["config"]["bogus"] = 1
    (tmp / "extra.json").write_text(json.dumps(config))
    return str(tmp / "extra.json")


def test_deep_json_through_the_console_is_exit_2_and_one_line(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    done = subprocess.run([sys.executable, "-m", "lossscale_compat", "equivalent", "deep.json", "deep.json"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2  # not 1, "not equivalent"
    assert done.stderr.splitlines() == ["lossscale-compat equivalent: deep.json: its JSON is nested too deeply to be "
                                        "an optimizer or model config; pass the file Keras saved."]


def test_any_warning_loading_a_side_is_one_line_naming_the_file(capsys, tmp_path, monkeypatch):
    from lossscale_compat import _equivalence

    summary = _equivalence.config_summary

    def warning_summary(config, *args, **kwargs):
        import warnings

        warnings.warn("first line\nsecond line", UserWarning)
        warnings.warn("only deprecated", DeprecationWarning)
        return summary(config, *args, **kwargs)

    monkeypatch.setattr(_equivalence, "config_summary", warning_summary)
    code, out, err = run(capsys, OPTIMIZER_JSON, OPTIMIZER_JSON)
    assert code == 0
    assert err.splitlines() == [f"lossscale-compat equivalent: {OPTIMIZER_JSON}: warning: first line"] * 2


@pytest.mark.skipif(not KERAS3, reason="Keras 2's own class, which ours is there, does not warn about a NaN scale")
def test_a_warning_about_a_side_names_the_file_in_one_line(tmp_path):
    config = json.loads((GOLDEN_DIR / "tf24_lso_optimizer.json").read_text())
    config["config"]["initial_scale"] = float("nan")
    (tmp_path / "nan.json").write_text(json.dumps(config))
    done = subprocess.run([sys.executable, "-m", "lossscale_compat", "equivalent", OPTIMIZER_JSON, "nan.json"],
                          capture_output=True, text=True, cwd=tmp_path,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 1
    warned = [line for line in done.stderr.splitlines() if "never recovers" in line]
    assert warned == [line for line in warned if line.startswith("lossscale-compat equivalent: nan.json: warning: ")]
    assert len(warned) == 1 and "UserWarning" not in done.stderr and "lossscale-compat:" not in done.stderr


def test_the_command_line_dispatches_to_it():
    done = subprocess.run([sys.executable, "-m", "lossscale_compat", "equivalent", SAVED_MODEL, H5],
                          capture_output=True, text=True, cwd=str(GOLDEN_DIR.parent.parent))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("The optimizers are not equivalent:\n")


@pytest.mark.skipif(KERAS3, reason="Keras 3 saves no optimizer in a SavedModel")
def test_a_keras2_saved_model_with_keras_metadata_is_read(capsys, tmp_path):
    tf24_config = json.loads((GOLDEN_DIR / "tf24_lso_optimizer.json").read_text())
    model = compiled_model(modern_equivalent(tf24_config))
    model.fit(tf.ones((2, 3)), tf.zeros((2, 2)), verbose=0)
    model.save(str(tmp_path / "saved"), save_format="tf")
    assert (tmp_path / "saved" / "keras_metadata.pb").exists()
    assert run(capsys, str(tmp_path / "saved"), SAVED_MODEL)[0] == 0


@pytest.mark.parametrize("argv", [["only-one.json"], [OPTIMIZER_JSON, OPTIMIZER_JSON, "--frobnicate"]])
def test_a_usage_error_is_one_line_with_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as exited:
        _equivalent_cli.main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert err.count("\n") == 1 and err.startswith("lossscale-compat equivalent: error: ")
    assert "--help" in err


def test_equivalent_dynamic_configs_say_how_keras3s_own_class_trains_differently(capsys):
    """Configured alike is not trained alike on Keras 3: the command says so and points at record/compare."""
    code, out, err = run(capsys, SAVED_MODEL, OPTIMIZER_JSON)
    assert (code, err) == (0, "")
    said = "does not advance its `iterations`" in out and "lossscale-compat compare" in out
    assert said == KERAS3


# Round four (issue #45): every side that could not be read is exit 2 and one line, never 1 ("not equivalent").


def _json(tmp, name, value):
    (tmp / name).write_text(json.dumps(value))
    return str(tmp / name)


def _h5_attribute(tmp, name, value):
    import h5py
    import numpy as np

    with h5py.File(tmp / name, "w") as f:
        f.attrs["training_config"] = np.asarray(value) if isinstance(value, list) else value
    return str(tmp / name)


def _keras_zip(tmp, name, config=b'{"compile_config": {"optimizer": {"class_name": "SGD", "config": {}}}}',
               method=None, patch=None):
    """A .keras zip holding `config` as config.json, then `patch(bytes) -> bytes` applied to the archive."""
    import zipfile

    path = tmp / name
    with zipfile.ZipFile(path, "w", compression=method or zipfile.ZIP_STORED) as archive:
        archive.writestr("config.json", config)
    if patch is not None:
        path.write_bytes(patch(path.read_bytes()))
    return str(path)


def _set_central(data, offset, value):
    """Sets the 2-byte field at `offset` of the central directory header (0: its signature) and of the local one."""
    central = data.index(b"PK\x01\x02")
    local_offset = {8: 6, 10: 8}[offset]
    data = bytearray(data)
    data[central + offset:central + offset + 2] = value.to_bytes(2, "little")
    data[local_offset:local_offset + 2] = value.to_bytes(2, "little")
    return bytes(data)


def _corrupt_deflate(data):
    start = 30 + len("config.json")  # the local header, then the compressed bytes
    return data[:start] + b"\xff" * 8 + data[start + 8:]


UNREADABLE_ROUND_FOUR = {
    "training_config a string": lambda tmp: _json(tmp, "a.json", {"training_config": "optimizer_config"}),
    "training_config a list": lambda tmp: _json(tmp, "a.json", {"training_config": ["optimizer_config"]}),
    "compile_config a string": lambda tmp: _json(tmp, "a.json", {"compile_config": "optimizer"}),
    "compile_config a number": lambda tmp: _json(tmp, "a.json", {"compile_config": 3}),
    "class_name a list": lambda tmp: _json(tmp, "a.json", {"class_name": ["SGD"], "config": {}}),
    "class_name an object": lambda tmp: _json(tmp, "a.json", {"class_name": {"SGD": 1}, "config": {}}),
    "inner class_name a list": lambda tmp: _json(tmp, "a.json", {"training_config": {"optimizer_config": {
        "class_name": ["LossScaleOptimizer"], "config": {"inner_optimizer": {}}}}}),
    "H5 training_config an array": lambda tmp: _h5_attribute(tmp, "m.h5", [1, 2, 3]),
    "H5 training_config an int": lambda tmp: _h5_attribute(tmp, "m.h5", 7),
    "H5 training_config JSON of a list": lambda tmp: _h5_attribute(tmp, "m.h5", "[1, 2]"),
    ".keras config.json encrypted": lambda tmp: _keras_zip(tmp, "m.keras", patch=lambda d: _set_central(d, 8, 1)),
    ".keras unsupported method": lambda tmp: _keras_zip(tmp, "m.keras", patch=lambda d: _set_central(d, 10, 99)),
    ".keras corrupt deflate": lambda tmp: _keras_zip(tmp, "m.keras", config=b"{}" * 5000, method=8,
                                                     patch=_corrupt_deflate),
    ".keras config.json a list": lambda tmp: _keras_zip(tmp, "m.keras", config=b"[1]"),
}


@pytest.mark.parametrize("case", UNREADABLE_ROUND_FOUR)
def test_a_side_of_the_wrong_shape_is_exit_2_and_one_line(capsys, tmp_path, case):
    path = UNREADABLE_ROUND_FOUR[case](tmp_path)
    code, out, err = run(capsys, path, OPTIMIZER_JSON)
    lines = err.splitlines()
    assert (code, out) == (2, ""), (code, out, err)
    assert len(lines) == 1 and lines[0].startswith(f"lossscale-compat equivalent: {path}"), lines


def test_an_unreadable_saved_model_pb_is_exit_2_and_one_line(capsys, tmp_path, monkeypatch):
    import builtins

    (tmp_path / "sm").mkdir()
    (tmp_path / "sm" / "saved_model.pb").write_bytes(b"")
    real_open = builtins.open

    def refusing_open(file, *args, **kwargs):  # root reads a mode-000 file: refuse as the kernel would for a user
        if str(file).endswith("saved_model.pb"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    code, out, err = run(capsys, str(tmp_path / "sm"), OPTIMIZER_JSON)
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert "saved_model.pb: cannot read it (Permission denied)" in err
