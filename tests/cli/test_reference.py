"""docs/cli.md is the command line's reference written from its own parser: it must say what the parser says."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from bot.cli.json_output.reference import DOCUMENTS, key_meanings, parts_of
from bot.cli.json_output.reference import markdown as json_markdown
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


JSON_REFERENCE = REFERENCE.parent / "json.md"
SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


def test_the_json_reference_is_the_one_the_documents_write() -> None:
    assert JSON_REFERENCE.read_text(encoding="utf-8") == json_markdown(), (
        "docs/json.md is stale: write it again with `python -m bot.cli.json_output.reference > docs/json.md`")


def test_every_command_with_json_has_a_documented_document() -> None:
    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    with_json = {name for name, sub in choices.items() if any("--json" in a.option_strings for a in sub._actions)}
    assert {command.split()[0] for command, _ in DOCUMENTS} == with_json
    assert with_json >= {"runs", "stats", "history", "review", "calibration", "compare", "digest", "budget", "judges"}
    text = json_markdown()
    for command, _ in DOCUMENTS:
        assert f"\n## {command}\n" in text
        sub = choices[command.split()[0]]
        assert any(f"docs/json.md#{command.replace(' ', '-')}" in (a.help or "") for a in sub._actions), command


def test_every_key_is_snake_case_and_says_what_it_is() -> None:
    parts = {model for _, model in DOCUMENTS} | {part for _, model in DOCUMENTS for part in parts_of(model)}
    assert len({part.__name__ for part in parts}) == len(parts)  # each part has a heading of its own
    for part in parts:
        assert part.__doc__ and part.model_config.get("extra") == "forbid", part
        for name in part.model_fields:
            assert SNAKE.fullmatch(name), (part.__name__, name)
            assert key_meanings(part).get(name, "").strip(), (part.__name__, name)
