"""Records what TF 2.4.0 did in each program of tests/goldens/conformance_programs.py (issue 23).

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /tmp/tf24/bin/python tests/recorders/record_tf24_conformance.py

Each program mirrors one of TF 2.4.0's own tests through TF 2.4's public API; this runs each on
TF 2.4.0 and writes its result (or its error) to tests/goldens/conformance.json.
"""

import json
import os
import sys
import tempfile

import tf24_recording
from tf24_recording import tf

import conformance_programs  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)


def main():
    cases = {}
    for name, (tf24_file, tf24_test, program) in sorted(conformance_programs.PROGRAMS.items()):
        with tempfile.TemporaryDirectory() as directory:
            result = conformance_programs.attempt(lambda program=program, directory=directory: program(tf, directory))
        cases[name] = {"tf24_file": tf24_file, "tf24_test": tf24_test, "result": result}
        print(name, json.dumps(result)[:160])
    goldens = {
        "meta": {"tensorflow": tf.__version__, "git_version": tf.version.GIT_VERSION,
                 "python": sys.version.split()[0], "recorded_by": "tests/recorders/record_tf24_conformance.py"},
        "cases": cases,
    }
    with open(os.path.join(tf24_recording.GOLDENS, "conformance.json"), "w") as f:
        json.dump(goldens, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
