"""`lossscale-compat COMMAND ...` and `python -m lossscale_compat COMMAND ...`.

Each command lives in its own module with a `main(argv) -> int`; this dispatcher imports only the one
asked for, so `migrate` never imports TensorFlow.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# command -> (module with `main(argv)`, one-line help). `migrate`'s parser expects its own name first.
COMMANDS = {
    "migrate": ("lossscale_compat.codemods.cli", "rewrite TF 2.4 loss-scaling call sites to the modern Keras API"),
    "run": ("lossscale_compat.legacy._run", "run a TF 2.4 program unmodified, with TF 2.4's names in place"),
    "equivalent": ("lossscale_compat._equivalent_cli", "check that two saved optimizers are configured alike"),
    "record": ("lossscale_compat._trace", "run a program and trace every loss-scaled step it takes"),
    "compare": ("lossscale_compat._compare", "compare two traces step by step; say where they part"),
}
# The commands that run on Python 3.8 with TensorFlow 2.4.0, the old stack a migration is proved against.
OLD_STACK_COMMANDS = ("record", "compare")
EXIT_USAGE = 2


def _usage() -> str:
    lines = ["usage: lossscale-compat [--version] COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command; returns its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--version":
        from lossscale_compat import __version__

        print(f"lossscale-compat {__version__}")
        return 0
    if not args or args[0] in ("-h", "--help"):
        print(_usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else EXIT_USAGE
    command = args[0]
    if command not in COMMANDS:
        print(f"lossscale-compat: unknown command {command!r}; use one of: {', '.join(COMMANDS)}", file=sys.stderr)
        return EXIT_USAGE
    if sys.version_info < (3, 9) and command not in OLD_STACK_COMMANDS:
        print(
            f"lossscale-compat {command} needs Python 3.9+ and TensorFlow 2.15+; on this Python (TF 2.4's) only "
            "`record` and `compare` run: record here, then migrate and compare on today's stack",
            file=sys.stderr,
        )
        return EXIT_USAGE
    module = importlib.import_module(COMMANDS[command][0])
    return module.main(args if command == "migrate" else args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
