"""Rubric files written for a test: a small valid rubric as data, written as YAML, and a seed rubric read as data."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.rubric import builtin_dir

# The rubrics shipped in rubrics/, by name, as lists show them.
SHIPPED = ["academic", "answer-relevance", "benchmark", "context-recall", "context-relevance", "correctness", "eth",
           "faithfulness", "helpfulness", "pairwise"]


def mini(name: str = "mini", **changes) -> dict:
    """A small valid rubric as data; `changes` replace top-level keys (None deletes one)."""
    data = {
        "name": name,
        "aliases": [f"{name}-alias"],
        "version": "1.0",
        "title": "Mini rubric",
        "description": "A small rubric for tests.",
        "system": "Grade the answer.",
        "user_template": "Q: $question\nR: $reference\nA: $answer\n",
        "output": {
            "score": {"type": "integer", "min": 0, "max": 2},
            "verdict": {"type": "enum", "values": ["good", "bad"]},
            "why": {"type": "string"},
        },
        "rules": [{"check": "(score == 2) == (verdict == 'good')", "message": "score 2 exactly when good"}],
        "headline": {"score": "score / 2 * 100", "pass": "score >= 1", "label": "{verdict} {score}/2", "tag": "verdict"},
    }
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def write(directory: Path, data, name: str | None = None) -> Path:
    path = directory / f"{name or data['name']}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def seed_data(name: str) -> dict:
    return yaml.safe_load((builtin_dir() / f"{name}.yaml").read_text(encoding="utf-8"))


GROUNDED_TEMPLATE = "Q: $question\nR: $reference\nRetrieved:\n$context\nA: $answer\n"


def grounded(name: str = "in-passages", **changes) -> dict:
    """A small rubric that reads retrieved context ($context), as data: `mini` with the passages in its template."""
    return mini(name, **{"title": "Grounded rubric", "description": "Is the answer grounded in the passages?",
                         "user_template": GROUNDED_TEMPLATE, **changes})


def grounded_reply(body: dict) -> dict:
    """What a sound judge of `grounded` says: good (2) when the answer's text is in a retrieved passage, else bad."""
    user = body["messages"][1]["content"]
    answer = user.rsplit("A: ", 1)[1].split("\n", 2)[1]
    retrieved = user.split("Retrieved:\n", 1)[1].rsplit("\nA: ", 1)[0]
    good = answer in retrieved
    return {"score": 2 if good else 0, "verdict": "good" if good else "bad", "why": "in a passage" if good else "not"}
