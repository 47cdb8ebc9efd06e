"""The API reference lists every public name, as the code describes it."""

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
