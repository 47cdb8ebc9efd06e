"""Records what TF 2.4.0 did in each TF1 graph-mode program of tests/goldens/graph_programs.py (issue 35).

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/tf24/bin/python tests/recorders/record_tf24_graph.py

Writes each program's result (or its error) to tests/goldens/graph.json.
"""

import tf24_recording
from tf24_recording import tf

import conformance_programs  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)
import graph_programs  # noqa: E402


def main():
    cases = {}
    for name, (tf24_file, tf24_test, _) in sorted(graph_programs.PROGRAMS.items()):
        result = conformance_programs.attempt(lambda name=name: graph_programs.run_program(tf, name))
        cases[name] = {"tf24_file": tf24_file, "tf24_test": tf24_test, "result": result}
        print(name, str(result)[:160])
    tf24_recording.write_goldens("graph.json", "record_tf24_graph.py", {"cases": cases})


if __name__ == "__main__":
    main()
