"""The command line's reference, docs/cli.md, written from the parser itself: `python -m bot.cli.reference` prints it
(a test fails when the file is stale)."""

from __future__ import annotations

import argparse
import re
import sys

from bot.cli.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNSCORED, EXIT_USAGE
from bot.cli.parser import build_parser

JSON_KEYS = re.compile(r"docs/json\.md#([\w-]+)")  # where --json's keys are documented
WIDTH = 100  # the width usage lines are wrapped to, whatever the terminal that runs this
EXITS = [(EXIT_OK, "done: every row scored, or nothing to judge"),
         (EXIT_UNSCORED, "done, with rows left without a score; a calibration check below --min-agreement; goldens "
                         "missed"),
         (EXIT_USAGE, "a problem you can fix, said in one sentence (nothing was judged that you did not agree to)"),
         (EXIT_INTERNAL, "an unexpected error; rows already judged are saved"),
         (EXIT_INTERRUPTED, "interrupted (Ctrl-C); `judgebot resume` finishes the pending rows")]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """Each subcommand's parser and its one-line help, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            return {name: (sub, helps.get(name, "")) for name, sub in action.choices.items()}
    return {}


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """One line per argument: its flags or name, what it takes, and its help (none for a hidden one, as --help)."""
    lines = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(f"`{flag}`" for flag in action.option_strings)
            if action.nargs != 0:
                name += f" `{action.metavar or action.dest.upper()}`"
        else:
            choices = f" ({' or '.join(map(str, action.choices))})" if action.choices else ""
            name = f"`{action.metavar or action.dest.upper()}`{choices}"
        text = (action.help or "").replace("%(default)s", str(action.default)).replace("%%", "%")
        text = JSON_KEYS.sub(r"[docs/json.md#\1](json.md#\1)", text)  # a link beside this page
        required = " (required)" if action.required and action.option_strings else ""
        lines.append(f"- {name}{required}: {text}" if text else f"- {name}{required}")
    return lines


def _usage(parser: argparse.ArgumentParser) -> str:
    """A parser's usage line, wrapped to WIDTH whatever the terminal (argparse wraps to the terminal's width)."""
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def markdown() -> str:
    """The reference of every command, as Markdown."""
    parser = build_parser()
    out = ["# Command line reference", "",
           "Written from judgebot's own parser by `python -m bot.cli.reference > docs/cli.md`; a test fails when it",
           "is stale. `judgebot COMMAND --help` prints the same in a terminal. Back to the [README](../README.md).", "",
           f"{parser.description}", "", "```", _usage(parser), "```", "", "## Exit codes", ""]
    out += [f"- `{code}`: {meaning}" for code, meaning in EXITS]
    for name, (sub, help_text) in _subcommands(parser).items():
        out += ["", f"## judgebot {name}", "", f"{help_text[:1].upper()}{help_text[1:]}.", "", "```", _usage(sub),
                "```"]
        if options := _options(sub):
            out += ["", *options]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
