"""The `judgebot` command: parse, run the command the parser's table names, and turn what can go wrong into a
sentence and an exit code (bot.cli.exits), never a traceback."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from collections.abc import Sequence

from pydantic import ValidationError
from rich.console import Console

from bot.cli.context import Context
from bot.cli.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from bot.cli.parser import build_parser, command_of
from bot.cli.views.terminal_text import ClosedPipeProof, shown
from bot.config import Settings
from bot.errors import JudgebotError


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `judgebot` command. It ends the process: on return, what it leaves is never collected."""
    # Loading the libraries makes objects by the hundred thousand and frees almost none: the collector's passes over
    # them were about a tenth of start-up. It waits until a command has loaded what it uses (context.settled).
    gc.disable()
    try:
        return _main(argv)
    finally:
        # The process ends after this: the interpreter's last full passes over everything the libraries built would
        # free nothing that exiting does not, and took a third of a one-triple run's time. (What must be closed is
        # closed without them: a history's connections, see bot.store.connections.closed_at_exit.)
        gc.freeze()
        gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    # A reader of the output that goes away (`| head -1`) must not stop a run before its results file is written.
    if not isinstance(sys.stdout, ClosedPipeProof):
        sys.stdout = ClosedPipeProof(sys.stdout)
    args = build_parser().parse_args(argv)
    # With --json the one document is standard output's alone: everything else said goes to standard error.
    console = Console(highlight=False, stderr=bool(getattr(args, "json", False)))
    errors = Console(stderr=True, highlight=False)
    try:
        settings = Settings()
        logging.basicConfig(level=settings.judgebot_log_level, format="%(levelname)s %(name)s: %(message)s")
        return asyncio.run(command_of(args)(Context(args, settings, console)))
    except JudgebotError as err:  # a problem the person can fix: its text says how
        errors.print(f"[red]error[/]: {shown(str(err))}")
        return EXIT_USAGE
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])).upper()}: {e['msg'].removeprefix('Value error, ')}"
                               for e in err.errors())
        errors.print(f"[red]error[/]: a setting is invalid: {shown(problems)}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        errors.print("Interrupted. Rows not yet judged stay pending: `judgebot resume` finishes them.")
        return EXIT_INTERRUPTED
    except Exception as err:  # the last line of defence: a person sees a sentence, not a traceback
        if os.environ.get("JUDGEBOT_DEBUG"):
            raise
        errors.print(f"[red]judgebot hit an unexpected error[/]: {shown(f'{type(err).__name__}: {err}')}\n"
                     "Rows already judged are saved. Set JUDGEBOT_DEBUG=1 to see the details.")
        return EXIT_INTERNAL
