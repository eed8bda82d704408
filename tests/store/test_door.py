"""The store's one door: every name callers use comes from bot.store, and the contract that says so names every part."""

from __future__ import annotations

import tomllib
from pathlib import Path

import bot.store

ROOT = Path(__file__).resolve().parents[2]


def test_the_contract_forbids_every_module_and_sub_package_of_the_store() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    door = next(c for c in contracts if c["name"].startswith("One door to the history"))
    store = ROOT / "bot" / "store"
    parts = {f"bot.store.{path.stem}" for path in store.glob("*.py") if path.stem != "__init__"}
    parts |= {f"bot.store.{path.name}" for path in store.iterdir() if (path / "__init__.py").exists()}
    assert set(door["forbidden_modules"]) == parts


def test_every_name_the_door_exports_is_there_and_named_once() -> None:
    names = bot.store.__all__
    assert len(names) == len(set(names))
    missing = [name for name in names if not hasattr(bot.store, name)]
    assert missing == []
    assert "Store" in names and "get_run" in names and "save_verdicts" in names
