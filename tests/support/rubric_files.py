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
