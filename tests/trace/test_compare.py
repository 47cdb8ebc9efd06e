"""`lossscale-compat compare` on TF 2.4.0's recorded traces of examples/project, whole, altered and broken.

Runs without TensorFlow (compare needs none), on every stack and on TF 2.4.0's (`nox -s record-tf24`).
"""

import hashlib
import json
import os
import shutil

import pytest
from trace_runs import compare, lossscale_compat

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "examples", "project", "golden_trace.jsonl")
SCHEDULE = os.path.join(ROOT, "tests", "goldens", "trace_project_schedule.jsonl")


def lines_of(path):
    with open(path) as f:
        return f.read().splitlines()


def write_sealed(path, records):
    """Writes records as a trace whose end line's SHA-256 matches, as `record` seals one."""
    lines = [json.dumps(r, sort_keys=True) for r in records[:-1]]
    end = dict(records[-1], sha256=hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest())
    with open(path, "w") as f:
        f.write("".join(line + "\n" for line in lines) + json.dumps(end, sort_keys=True) + "\n")
    return path


def golden_records():
    return [json.loads(line) for line in lines_of(GOLDEN)]


def test_a_trace_agrees_with_itself():
    code, report, _ = compare(GOLDEN, GOLDEN)
    assert (code, report["same"], report["first_difference"]) == (0, True, None)


def test_another_learning_rate_schedule_parts_at_the_second_fit_step():
    """Two TF 2.4.0 runs that differ in `fit`'s learning rate, which is the same at `iterations` 0 only."""
    code, report, _ = compare(GOLDEN, SCHEDULE)
    steps = [json.loads(line) for line in lines_of(GOLDEN) if '"step"' in line]
    fit = steps[-1]["optimizer"]
    second_fit_step = next(s["step"] for s in steps if s["optimizer"] == fit and s["n"] == 1)
    assert code == 1
    assert (report["first_difference"]["step"], report["first_difference"]["optimizer"]) == (second_fit_step, fit)
    assert all(d.startswith("variable ") for d in report["first_difference"]["differences"])


def test_the_text_report_shows_both_runs_and_names_the_step():
    done = lossscale_compat("compare", GOLDEN, SCHEDULE)
    first = compare(GOLDEN, SCHEDULE)[1]["first_difference"]
    assert done.returncode == 1
    assert "TensorFlow 2.4.0" in done.stdout and "<-- first difference" in done.stdout
    assert "the runs part at step %d (optimizer %d's step 1" % (first["step"], first["optimizer"]) in done.stdout


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    picture = tmp_path / "trajectories.png"
    done = lossscale_compat("compare", "--plot", picture, GOLDEN, SCHEDULE)
    assert done.returncode == 1
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def bad(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", ["not a trace", "not JSON", "truncated", "cut mid-line", "edited", "missing"])
def test_a_broken_trace_is_one_line_and_exit_2(tmp_path, case):
    lines = lines_of(GOLDEN)
    if case == "not a trace":  # another program's JSON: the demo's summary
        path = os.path.join(ROOT, "examples", "project", "golden.json")
        want = "is not a trace of `lossscale-compat record`"
    elif case == "not JSON":
        path, want = bad(tmp_path, "notes.txt", "step 1: fine\n"), "is not a trace of `lossscale-compat record`"
    elif case == "truncated":  # killed before its end line
        path, want = bad(tmp_path, "t.jsonl", "\n".join(lines[:-1]) + "\n"), "is truncated: it has no end line"
    elif case == "cut mid-line":
        text = "\n".join(lines)
        path, want = bad(tmp_path, "t.jsonl", text[: len(text) // 2]), "is truncated or damaged at line"
    elif case == "edited":
        assert '"scale_after": 16384.0' in lines[5]
        lines[5] = lines[5].replace('"scale_after": 16384.0', '"scale_after": 32768.0')
        path, want = bad(tmp_path, "t.jsonl", "\n".join(lines) + "\n"), "was changed after it was recorded"
    else:
        path, want = tmp_path / "nothing.jsonl", "cannot read it"
    code, report, error = compare(GOLDEN, path)
    assert (code, report) == (2, None)
    assert error.count("\n") == 1 and want in error and error.startswith("lossscale-compat compare: ")


def _every(kind, key, value):
    def edit(records):
        for record in records:
            if kind in record:
                if value is KeyError:
                    record.pop(key)
                else:
                    record[key] = value

    return edit


@pytest.mark.parametrize(
    "edit",
    [
        _every("step", "scale_before", "x"),
        _every("step", "n", KeyError),
        _every("step", "skipped", "no"),
        _every("step", "loss", [1]),
        _every("step", "norm", [1.0]),
        _every("step", "sum", None),
        _every("step", "iterations", 1.5),
        _every("class", "shapes", None),
        _every("class", "variables", ["a"]),
        _every("format", "options", "x"),
    ],
)
def test_a_sealed_trace_of_the_wrong_shape_is_one_line_and_exit_2(tmp_path, edit):
    """A trace whose hash matches but whose values are of the wrong type (edited by hand, or by another tool, then
    sealed again) gave a traceback (TypeError, KeyError, IndexError) and exit 1, read as "the runs part"."""
    records = golden_records()
    edit(records)
    code, report, error = compare(GOLDEN, write_sealed(tmp_path / "t.jsonl", records))
    assert (code, report) == (2, None), error
    assert error.count("\n") == 1 and "is damaged: " in error and "record it again" in error, error


@pytest.mark.parametrize("path", ["/dev/zero", "fifo", "folder"])
def test_a_trace_that_is_not_a_regular_file_is_refused_before_it_is_read(tmp_path, path):
    """`/dev/zero` was read whole (memory without end), a FIFO with no writer blocked forever."""
    if path == "fifo":
        os.mkfifo(tmp_path / "fifo")
    if path == "folder":
        (tmp_path / "folder").mkdir()
    code, report, error = compare(GOLDEN, path if path.startswith("/") else tmp_path / path)
    assert (code, report) == (2, None), error
    assert error.count("\n") == 1 and "is not a regular file; name the trace file" in error, error


def test_traces_of_different_lengths(tmp_path):
    records = golden_records()
    steps = [r for r in records if "step" in r]
    shorter = [r for r in records if "step" not in r or r["step"] < len(steps) - 2]
    shorter[-1]["steps"] = len(steps) - 2
    code, _, error = compare(GOLDEN, write_sealed(tmp_path / "short.jsonl", shorter))
    assert code == 2 and "OLD has %d steps and NEW %d" % (len(steps), len(steps) - 2) in error


def test_a_trace_of_another_model(tmp_path):
    records = golden_records()
    for r in records:
        if "shapes" in r:
            r["shapes"][0] = [4, 16]
    code, _, error = compare(GOLDEN, write_sealed(tmp_path / "other.jsonl", records))
    assert code == 2 and "not the same model" in error


def test_an_incomplete_trace_needs_allow_incomplete(tmp_path):
    records = golden_records()
    crashed = [r for r in records if "step" not in r or r["step"] < 5]
    crashed[-1].update(end="crashed", error="ValueError: boom", exit_code=1, steps=5)
    path = write_sealed(tmp_path / "crashed.jsonl", crashed)
    code, _, error = compare(GOLDEN, path)
    assert code == 2 and "is incomplete: the run ended 'crashed' after 5 step(s) (ValueError: boom)" in error
    code, report, _ = compare(GOLDEN, path, "--allow-incomplete")
    assert (code, report["same"]) == (0, True)


def test_a_trace_without_steps(tmp_path):
    records = [r for r in golden_records() if "step" not in r and "class" not in r]
    records[-1].update(end="no-steps", steps=0, steps_taken=0)
    code, _, error = compare(write_sealed(tmp_path / "none.jsonl", records), GOLDEN)
    assert code == 2 and "holds no loss-scaled step" in error


@pytest.mark.parametrize("options", [["--rtol", "-1"], ["--atol", "nan"], ["--format", "xml"], ["--tolerance", "1"]])
def test_bad_options(options):
    done = lossscale_compat("compare", *options, GOLDEN, GOLDEN)
    assert (done.returncode, done.stdout) == (2, "") and done.stderr.strip()


def test_one_side_only():
    done = lossscale_compat("compare", GOLDEN)
    assert (done.returncode, done.stdout) == (2, "") and "NEW" in done.stderr


def test_a_copy_is_the_same_run(tmp_path):
    copy = tmp_path / "copy.jsonl"
    shutil.copy(GOLDEN, str(copy))
    assert compare(GOLDEN, copy)[0] == 0
