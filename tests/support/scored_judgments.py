"""Judgments built by hand as the judge would have produced them, for the tests of what the bot shows of one."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from bot.rubric import Rubric
from bot.store import Judgment

ETH_CORRECT = {"correctness": 2, "completeness": 2, "result_tag": "Correct",
               "reasoning": "Names myStudies, the ETHIS portal, as the ground truth does."}


def scored(rubric: Rubric, output: dict[str, Any], /, **overrides: Any) -> Judgment:
    """A scored judgment as the judge would have produced it, built by hand (no judge)."""
    scoring = rubric.score(output)
    fields: dict[str, Any] = {
        "id": 42, "run_id": 7, "status": "scored", "output": output, "derived": scoring.derived,
        "headline": scoring.headline, "passed": scoring.passed, "label": scoring.label, "tag": scoring.tag,
        "raw_reply": json.dumps(output, ensure_ascii=False), "tokens_in": 900, "tokens_out": 120,
        "latency_ms": 2300, "judge_model": "judge-test", "rubric_name": rubric.name,
        "rubric_version": rubric.version, "rubric_hash": rubric.content_hash,
        "question": "How do I register for my exams?", "reference": "In myStudies (ETHIS).",
        "answer": "Use myStudies.", "user_id": "U0ASKER", "model_name": "campus-bot-v2", "channel_id": "C0GENERAL",
        "team_id": "T0TEST", "created_at": datetime(2024, 5, 6, 7, 8, 9),
    }
    fields.update(overrides)
    return Judgment(**fields)
