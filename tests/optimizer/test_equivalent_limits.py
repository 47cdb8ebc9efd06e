"""`equivalent` on hostile files: over-long integers, deep SavedModels and zip bombs end with exit 2 and one line."""

import json
import zipfile

import h5py
import pytest

from lossscale_compat import _equivalent_cli

HUGE = "9" * 5000  # over Python's 4,300-digit limit for int(str)
SGD = {"class_name": "SGD", "config": {"learning_rate": 0.1}}


def run(capsys, *argv):
    code = _equivalent_cli.main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_unreadable(capsys, path, says):
    code, out, err = run(capsys, path, path)
    assert (code, out) == (_equivalent_cli.EXIT_ERROR, "")
    assert len(err.splitlines()) == 1 and says in err, err


def huge_integer_config():
    return '{"optimizer_config": {"class_name": "SGD", "config": {"learning_rate": 0.1, "decay": %s}}}' % HUGE


def test_a_json_config_with_a_5000_digit_integer_is_exit_2(tmp_path, capsys):
    path = tmp_path / "huge.json"
    path.write_text(huge_integer_config())
    assert_unreadable(capsys, path, "not a .h5, .keras or JSON file we can read")


def test_an_h5_training_config_with_a_5000_digit_integer_is_exit_2(tmp_path, capsys):
    path = tmp_path / "huge.h5"
    with h5py.File(path, "w") as f:
        f.attrs["training_config"] = huge_integer_config()
    assert_unreadable(capsys, path, "its training config is not JSON we can read")


def keras_zip(path, config_text):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("config.json", config_text)
    return path


def test_a_keras_config_with_a_5000_digit_integer_is_exit_2(tmp_path, capsys):
    path = keras_zip(tmp_path / "huge.keras", '{"compile_config": %s}' % huge_integer_config())
    assert_unreadable(capsys, path, "not a .keras file with a config.json we can read")


def test_a_keras_zip_bomb_is_refused_before_it_is_decompressed(tmp_path, capsys, monkeypatch):
    """A config.json over the limit is refused from the zip's header (the bench runs a real, large bomb)."""
    monkeypatch.setattr(_equivalent_cli, "MAX_CONFIG_BYTES", 10_000)
    path = keras_zip(tmp_path / "bomb.keras", '{"compile_config": {"optimizer": %s}}' % json.dumps(SGD) + " " * 20_000)
    assert_unreadable(capsys, path, "would be 20")
    code, _, err = run(capsys, keras_zip(tmp_path / "small.keras", json.dumps({"compile_config": {"optimizer": SGD}})),
                       keras_zip(tmp_path / "small2.keras", json.dumps({"compile_config": {"optimizer": SGD}})))
    assert (code, err) == (0, "")


def protobuf_string(field, payload):
    """One length-delimited protobuf field."""
    tag, length, varint = (field << 3) | 2, len(payload), b""
    for value in (tag, length):
        while True:
            byte, value = value & 0x7F, value >> 7
            varint += bytes([byte | (0x80 if value else 0)])
            if not value:
                break
    return varint + payload


@pytest.mark.parametrize(
    "metadata",
    [
        b'{"training_config": ' + b'{"a": ' * 40_000,  # never closed: each '{' a candidate for the old reader
        b"{" * 40_000 + b'"training_config"',
        b'{"training_config": ' + b"[" * 40_000 + b"]" * 40_000 + b"}",  # valid JSON, too deep to read
    ],
    ids=["unclosed", "braces", "too_deep"],
)
def test_a_deep_saved_model_is_exit_2(tmp_path, capsys, metadata):
    (tmp_path / "keras_metadata.pb").write_bytes(protobuf_string(1, protobuf_string(5, metadata)))
    (tmp_path / "saved_model.pb").write_bytes(b"")
    assert_unreadable(capsys, tmp_path, "holds no Keras training config")


def test_a_saved_model_metadata_nested_in_messages_is_found(tmp_path, capsys):
    """The control for the above: well-formed metadata, in a string of a nested message, is read."""
    metadata = json.dumps({"class_name": "Sequential", "training_config": {"optimizer_config": SGD}}).encode()
    (tmp_path / "keras_metadata.pb").write_bytes(protobuf_string(1, b"\x10\x01" + protobuf_string(5, metadata)))
    (tmp_path / "saved_model.pb").write_bytes(b"")
    code, _, err = run(capsys, tmp_path, tmp_path)
    assert (code, err) == (0, "")
