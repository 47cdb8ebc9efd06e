"""Run at interpreter start by lossscale_compat_legacy.pth when LOSSSCALE_COMPAT_LEGACY is set."""

import os

if os.environ.get("LOSSSCALE_COMPAT_LEGACY", "") not in ("", "0"):
    from lossscale_compat.legacy._install import install

    install()
