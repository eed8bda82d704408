"""An eth triple and reply, a bare request and schema, and a retry delay below any backoff, for the judge client's tests."""

from __future__ import annotations

from bot.records import Triple

ETH_OK = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "Names myStudies (ETHIS)."}
TRIPLE = Triple(
    question="How do I register for my exams at ETH?",
    reference="Exam registration is done in myStudies (ETHIS) during the registration period.",
    answer="You register in myStudies, the ETHIS portal, during the registration window.",
)
MESSAGES = [{"role": "system", "content": "Reply with JSON."}, {"role": "user", "content": "Grade this."}]
SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}},
    "required": ["score"],
    "additionalProperties": False,
}
# Below the smallest backoff (0.5 * 0.5 s): a retry faster than this honoured the server's hint.
FASTER_THAN_BACKOFF = 0.24
