"""A plain rename: every use of the TF 2.4 name is spelled as the target's name."""

from __future__ import annotations

from lossscale_compat import _mapping

from .._edits import NewName, SiteEdit
from .site import Site


def decide(site: Site) -> SiteEdit:
    return NewName(_mapping.replacement(site.row, site.target))
