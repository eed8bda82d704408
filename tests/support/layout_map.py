"""CONTRIBUTING.md's map of the code, made from the packages' and modules' own docstrings, so it cannot drift from
them: `python -m tests.support.layout_map` writes it between its markers, and a test fails when it is stale."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
BEGIN = "<!-- the map: written by `python -m tests.support.layout_map` from the docstrings; do not edit by hand -->"
END = "<!-- end of the map -->"


def summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line ("(no docstring)" where it has none)."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    return " ".join(docstring.strip().split("\n\n")[0].split()) if docstring else "(no docstring)"


def package_lines(package: Path, depth: int = 0) -> list[str]:
    """The map of one package: its own line, its modules, then its sub-packages, each in name order."""
    indent = "  " * depth
    lines = [f"{indent}- **{package.relative_to(ROOT).as_posix()}/**: {summary(package / '__init__.py')}"]
    for module in sorted(package.glob("*.py")):
        if module.name != "__init__.py":
            lines.append(f"{indent}  - `{module.name}`: {summary(module)}")
    for child in sorted(p for p in package.iterdir() if (p / "__init__.py").is_file()):
        lines += package_lines(child, depth + 1)
    return lines


def the_map() -> str:
    """The whole map of `bot/`, as Markdown."""
    return "\n".join([BEGIN, *package_lines(ROOT / "bot"), END])


def written(text: str) -> str:
    """CONTRIBUTING.md's `text` with its map replaced by today's."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + the_map() + text[end:]


def main() -> int:
    CONTRIBUTING.write_text(written(CONTRIBUTING.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
