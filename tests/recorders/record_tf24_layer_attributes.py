"""Records what TF 2.4.0 gave TF 2.4 code reading and setting a layer's private mixed-precision attributes
(tests/goldens/layer_attribute_programs.py).

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/tf24/bin/python tests/recorders/record_tf24_layer_attributes.py

It writes tests/goldens/tf24_layer_attributes.json: per layer (a Dense under each policy, a layer with
`autocast=False`, the three kinds of model) `_compute_dtype`, `_compute_dtype_object`, `_dtype_policy`, `_autocast`
and `_dtype` next to the public values; the output dtype of a custom layer that set `self._autocast = False`; and
what `_set_dtype_policy` and assigning the private attributes did.
"""

import tf24_recording
from tf24_recording import tf

import layer_attribute_programs  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)


def main():
    tf24_recording.write_goldens(
        "tf24_layer_attributes.json", "record_tf24_layer_attributes.py", layer_attribute_programs.run_all(tf))


if __name__ == "__main__":
    main()
