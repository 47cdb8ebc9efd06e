"""The committed table of TF 2.4.0's tests (docs/tf24_conformance.md) is the generated one, and says no more than
the suite does."""

import pathlib

import make_table
import test_conformance_items
import test_conformance_programs
import tf24_catalogue


def suite_mirrors():
    """(file, test) pairs named by this suite's tests: docstrings of the re-run items, and the programs' marks."""
    found = set()
    for module in (test_conformance_items, test_conformance_programs):
        for name, value in vars(module).items():
            if name.startswith("test_") and callable(value):
                found.update(tf24_catalogue.mirrored_tests(value.__doc__))
    found.update((f, t) for f, t, _ in test_conformance_programs.conformance_programs.PROGRAMS.values())
    return found


def test_committed_table_is_generated():
    """docs/tf24_conformance.md equals make_table.py's output from the committed records."""
    assert make_table.TABLE.read_text() == make_table.render()


def test_every_tf24_test_is_mirrored_or_says_why_not():
    """Each catalogued TF 2.4 test has a test of ours here, or a reason in NOT_MIRRORED; never both."""
    mirrored = suite_mirrors()
    for path, tests in tf24_catalogue.TESTS.items():
        for test in tests:
            assert ((path, test) in mirrored) != ((path, test) in tf24_catalogue.NOT_MIRRORED), (path, test)


def test_records_name_only_catalogued_tests():
    """The committed records hold results for catalogued TF 2.4 tests only."""
    known = {f"{path}::{test}" for path, tests in tf24_catalogue.TESTS.items() for test in tests}
    for record in make_table.records():
        assert set(record["results"]) <= known
    assert pathlib.Path(make_table.RECORDS).is_dir()
