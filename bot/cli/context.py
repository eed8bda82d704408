"""What every command is given: its arguments, the settings and the terminal, and the history and the rubrics it
opens when it first asks for them."""

from __future__ import annotations

import argparse
import gc
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from bot.config import Settings

if TYPE_CHECKING:  # a command loads the history and the rubrics when it uses them, not at start-up
    from bot.rubric import RubricSet
    from bot.store import Store


@dataclass
class Context:
    """One command's arguments, settings and terminal; the history and the rubrics, opened on first use."""

    args: argparse.Namespace
    settings: Settings
    console: Console

    @cached_property
    def store(self) -> Store:
        """The history database (DATABASE_URL), brought up to date when it is opened; where it is said once, on
        stderr, when this command created it (the output of `labels export` or `mcp` stays its own)."""
        from bot.store import Store

        store = Store.open(self.settings.db_url)
        if store.created:
            Console(stderr=True, highlight=False).print(f"History: {escape(where(store))} (new)")
        return store

    @cached_property
    def rubrics(self) -> RubricSet:
        """The rubrics in force: the built-in ones, then those of RUBRICS_DIR."""
        from bot.rubric import load_rubrics

        return load_rubrics(self.settings.rubrics_dir)


def where(store: Store) -> str:
    """Where the history is kept, as a person finds it: a file's absolute path (~ for the home folder), or the
    database's URL without its password."""
    if "://" in store.name:
        return store.name
    path, home = Path(store.name).expanduser().absolute(), Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def settled() -> None:
    """Everything imported so far lives as long as the process: keep it out of the collector's full passes, and let
    the collector run again (`main` holds it off while a command starts).

    Those passes otherwise cost a run about a fifth of its CPU time; a command that works for long calls this once
    it has imported what it uses.
    """
    gc.freeze()
    gc.enable()
