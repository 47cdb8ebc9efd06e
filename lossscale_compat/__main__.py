"""`python -m lossscale_compat migrate ...`: the migration command line."""

from codemods.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
