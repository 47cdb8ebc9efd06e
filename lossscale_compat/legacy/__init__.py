"""Legacy mode: TF 2.4 mixed-precision programs run unmodified, with TF 2.4's names and behaviour.

Turned on by `lossscale_compat.install()`, by `lossscale-compat run SCRIPT`, or for every Python process
by the environment variable LOSSSCALE_COMPAT_LEGACY=1. It sits above the classes, which never import it.
"""

from lossscale_compat.legacy._install import install, is_installed, uninstall

__all__ = ("install", "is_installed", "uninstall")
