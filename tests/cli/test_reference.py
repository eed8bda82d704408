"""docs/cli.md is the command line's reference written from its own parser: it must say what the parser says."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from bot.cli.parser import COMMANDS, build_parser
from bot.cli.reference import markdown
from tests.support.cli import judgebot

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
                if flag not in ("-h", "--help") and action.help != argparse.SUPPRESS:
                    assert f"`{flag}`" in text, (command, flag)


def test_hidden_options_stay_out_of_the_reference_as_out_of_help(tmp_path) -> None:
    written = subprocess.run([sys.executable, "-m", "bot.cli.reference"], capture_output=True, text=True, check=True,
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REFERENCE.parents[1])}).stdout
    assert written == REFERENCE.read_text(encoding="utf-8")
    assert "SUPPRESS" not in written
    align = written.split("## judgebot align\n")[1].split("\n## ")[0]
    code, out = judgebot(tmp_path, "align", "--help")
    assert code == 0 and "--judge-model" in align and "--judge-model" in out
    for hidden in ("--judges ", "--judges-file", "--samples"):  # align's hidden options: neither shows them
        assert hidden not in align and hidden not in out, hidden
