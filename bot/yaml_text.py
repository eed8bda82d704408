"""Reading YAML safely (through libyaml's C parser when PyYAML was built with it), and writing it for people to diff."""

from __future__ import annotations

import re
from typing import Any

import yaml

# The C parser reads a rubric about ten times faster; both build the same plain data and raise yaml.YAMLError.
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """The plain data (dicts, lists, strings, numbers) that the YAML `text` holds; no tags that build objects."""
    return yaml.load(text, Loader=_SafeLoader)


def yaml_problem(err: Exception) -> str:
    """What is wrong with a YAML text, and where (line and column of its file), without the parser's stand-in name
    for the text ("<unicode string>")."""
    if isinstance(err, yaml.MarkedYAMLError) and err.problem_mark is not None:
        mark = err.problem_mark
        context = f" ({err.context})" if err.context else ""
        return f"{err.problem}{context} at line {mark.line + 1}, column {mark.column + 1}"
    return str(err)


class _Dumper(yaml.SafeDumper):
    """The safe dumper, writing a text of several lines as a block (`|`), line by line as it reads."""


_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")  # line breaks YAML reads back as "\n" unless escaped


def _text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted scalar when a block cannot hold the text exactly (such as trailing spaces); other
    # line breaks are written raw even in quotes, so such a text is written in double quotes, where they are escaped
    style = '"' if _OTHER_BREAKS.search(text) else "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _text)


def dump_yaml(data: Any, *, width: int = 110) -> str:
    """`data` as YAML a reviewer can read and diff: keys in their order, texts of several lines as blocks, long ones
    folded at `width`; reading it back gives `data` exactly."""
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=width)
