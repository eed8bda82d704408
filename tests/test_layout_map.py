"""CONTRIBUTING.md's map of the code is the one the packages' and modules' docstrings make today."""

from __future__ import annotations

from tests.support.layout_map import CONTRIBUTING, ROOT, the_map, written


def test_the_map_in_contributing_is_made_from_todays_docstrings() -> None:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    assert written(text) == text, "CONTRIBUTING.md's map is stale: run `python -m tests.support.layout_map`"


def test_the_map_names_every_module_of_the_code() -> None:
    made = the_map()
    modules = [path for path in (ROOT / "bot").rglob("*.py") if path.name != "__init__.py"]
    assert len(modules) > 200 and all(f"`{path.name}`" in made for path in modules)
    assert "(no docstring)" not in made
