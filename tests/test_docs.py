"""The docs say what the code does: the API reference, the README's examples, extras and picture, nox's sessions."""

import ast
import re
from pathlib import Path

from lossscale_compat import _apidoc

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_api_reference_is_generated_from_the_public_names():
    """Should fail when a public name is added, removed or re-described; run `python -m lossscale_compat._apidoc`."""
    assert (DOCS / "api.md").read_text(encoding="utf-8") == _apidoc.render()


def test_every_public_name_links_to_a_page_that_exists_and_mentions_it():
    import lossscale_compat
    import lossscale_compat.testing

    names = [*lossscale_compat.__all__, *lossscale_compat.testing.__all__]
    assert set(names) <= set(_apidoc.DETAILS)
    for name in names:
        page = DOCS / _apidoc.DETAILS[name]
        assert f"`{name}" in page.read_text(encoding="utf-8") or f".{name}" in page.read_text(encoding="utf-8"), name


README = DOCS.parent / "README.md"
# A code block the README marks as run here: the marker line, then the block.
RUNS = re.compile(r"<!-- runs: tests/test_docs.py -->\n```python\n(.*?)```", re.DOTALL)


def test_the_readme_equivalence_examples_run_and_say_what_they_print(capsys):
    """Runs the README's marked blocks in order, in one namespace, as a reader pasting them would."""
    from lossscale_compat import _flavour

    blocks = RUNS.findall(README.read_text(encoding="utf-8"))
    assert len(blocks) == 2, "the README's two equivalence examples are marked `<!-- runs: tests/test_docs.py -->`"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md (migrate, then check)", "exec"), namespace)
    printed = capsys.readouterr().out
    claimed = re.search(r'# Keras 3: "([^"]+)"', blocks[0]).group(1)
    if not _flavour.has_keras3_loss_scaling():
        assert printed == "\n"  # Keras 2's own class trains as TF 2.4's: no difference
    elif "never advances" not in printed:  # Keras 3.0-3.6 differ at step 0 already (docs/equivalence.md)
        assert claimed in printed and "does not count a skipped step" in printed, printed
    exec(compile(blocks[1], "README.md (TF 2.4's numbers)", "exec"), namespace)  # its assertion must pass


def test_the_readme_install_section_lists_every_extra():
    import tomllib

    extras = tomllib.loads((DOCS.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    install = README.read_text(encoding="utf-8").split("## Install", 1)[1].split("\n## ", 1)[0]
    missing = [name for name in extras if f"`{name}`" not in install]
    assert not missing, f"README's Install section does not list the extras {missing}"


def test_the_readme_shows_the_committed_plot_that_nox_rewrites():
    picture = re.search(r"!\[[^\]]+\]\(([^)]+\.png)\)", README.read_text(encoding="utf-8")).group(1)
    assert (DOCS.parent / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f'PLOT = "{picture}"' in (DOCS.parent / "noxfile.py").read_text()


def test_every_nox_session_docstring_starts_with_a_line_that_stands_alone():
    """`nox --list` shows a session's first docstring line only: it must be a whole sentence."""
    tree = ast.parse((DOCS.parent / "noxfile.py").read_text())
    sessions = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("session" in ast.unparse(decorator) for decorator in node.decorator_list)
    ]
    assert len(sessions) >= 8
    for session in sessions:
        lines = (ast.get_docstring(session, clean=False) or "").split("\n")
        assert lines[0].endswith(".") and (len(lines) == 1 or not lines[1].strip()), (session.name, lines[:2])


def test_record_goldens_runs_every_tf24_recorder():
    """A recorder left out of `nox -s record-goldens` would leave its golden behind at the next re-recording."""
    tree = ast.parse((DOCS.parent / "noxfile.py").read_text())
    listed = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "TF24_RECORDERS" for t in node.targets)
    )
    recorders = {f"tests/recorders/{p.name}" for p in (DOCS.parent / "tests" / "recorders").glob("record_tf24*.py")}
    assert recorders - {"tests/recorders/record_tf24_names.py"} == set(listed)  # the names recorder runs last, twice
    assert len(listed) == len(set(listed))


# A path of this machine or of a workspace outside the repository: a reader of the docs has none of them.
OUTSIDE = ("../shared", "/work/", "/root/", "/home/", "/tmp/")
# A repository path in backticks: a first part that is a top-level entry of the repository, then a slash.
REPO_PATH = re.compile(r"`([\w.-]+/[^`\s]*)`")
# A placeholder part of such a path (`codemods/target_names/STACK.json`): capitals only, before any extension.
PLACEHOLDER = re.compile(r"[A-Z_]+(\.\w+)?")


def cited_paths(page: Path, text: str) -> list[str]:
    """The files `text` (the page at `page`) cites that are outside the repository or do not exist in it."""
    root = DOCS.parent
    top = {entry.name for entry in root.iterdir()}
    bad = [word for word in OUTSIDE if word in text]
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        target = link.split("#")[0]
        if target and not re.match(r"[a-z]+:", target) and not (page.parent / target).exists():
            bad.append(link)
    for cited in REPO_PATH.findall(text):
        path = cited.split("::")[0].split("#")[0].rstrip("/")
        parts = path.split("/")
        if parts[0] not in top or any(set(part) & set("*{}<>$") or PLACEHOLDER.fullmatch(part) for part in parts):
            continue
        if not (root / path).exists():
            bad.append(cited)
    return bad


def test_the_docs_cite_only_files_in_the_repository():
    """Should fail on `../shared/...`, a path of a developer's machine, or a link or repository path that is gone."""
    pages = [README, *sorted(DOCS.glob("*.md"))]
    assert len(pages) > 5
    bad = {page.name: found for page in pages if (found := cited_paths(page, page.read_text(encoding="utf-8")))}
    assert not bad, f"the docs cite what a reader of the repository does not have: {bad}"


def test_the_citation_check_finds_each_kind_of_outside_reference():
    page = DOCS / "faq.md"
    assert cited_paths(page, "see `../shared/reference/notes.md`") == ["../shared"]
    assert cited_paths(page, "as read for /work/shared/reference/tf24-behaviour.md") == ["/work/"]
    assert cited_paths(page, "[gone](nowhere.md) and [here](codemod.md#warning-codes)") == ["nowhere.md"]
    assert cited_paths(page, "`tests/no_such_test.py` and `tests/test_docs.py::x`") == ["tests/no_such_test.py"]
    assert cited_paths(page, "`codemods/target_names/STACK.json`, `docs/codemod.md#lsc118`") == []
