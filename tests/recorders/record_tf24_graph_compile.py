"""Records what TF 2.4.0's `compile` did under each TF 2.4 policy in a TF1 graph (issue 35), one optimizer or a list.

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/tf24/bin/python tests/recorders/record_tf24_graph_compile.py

Writes tests/goldens/graph_compile.json.
"""

import tf24_recording
from tf24_recording import tf

import conformance_programs  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)
import graph_programs  # noqa: E402


def main():
    cases = {}
    for policy in sorted(graph_programs.COMPILE_POLICIES):
        for optimizers in ("one", "list"):
            result = conformance_programs.attempt(
                lambda: graph_programs.compile_under_policy(tf, policy, optimizers))
            cases[f"{optimizers} under {policy}"] = result
            print(optimizers, policy, str(result)[:160])
    tf24_recording.write_goldens("graph_compile.json", "record_tf24_graph_compile.py", {"cases": cases})


if __name__ == "__main__":
    main()
