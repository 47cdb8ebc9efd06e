"""Records what TF 2.4.0 gave serializing its experimental `Policy` and both loss-scale optimizer forms
(tests/goldens/serialization_programs.py).

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/tf24/bin/python tests/recorders/record_tf24_serialization.py

It writes tests/goldens/tf24_serialization.json: per Policy its class name, `serialize_keras_object`, a layer's
`dtype` config and the layer round trip; per optimizer `tf.keras.optimizers.serialize`, `get_config` and the
deserialized optimizer.
"""

import tf24_recording
from tf24_recording import tf

import serialization_programs  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)


def main():
    tf24_recording.write_goldens(
        "tf24_serialization.json", "record_tf24_serialization.py", serialization_programs.run_all(tf))


if __name__ == "__main__":
    main()
