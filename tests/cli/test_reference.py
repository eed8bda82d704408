"""docs/cli.md is the command line's reference written from its own parser: it must say what the parser says."""

from __future__ import annotations

from pathlib import Path

from bot.cli.parser import COMMANDS, build_parser
from bot.cli.reference import markdown

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_reference_is_the_one_the_parser_writes() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == markdown(), (
        "docs/cli.md is stale: write it again with `python -m bot.cli.reference > docs/cli.md`")


def test_every_command_and_option_is_in_the_reference() -> None:
    text = markdown()
    parser = build_parser()
    for command in {name.split()[0] for name in COMMANDS}:
        assert f"## judgebot {command}\n" in text
        sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        for action in sub._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}`" in text, (command, flag)
