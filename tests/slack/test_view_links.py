""""Open in judgebot": with VIEW_URL, a card, its Details and a digest link to the row and the channel's trend in the
web view (valid Block Kit); without it, no link anywhere; a VIEW_URL that would break a link is refused."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from bot.config import Settings
from bot.slack.views.card import result_card
from bot.slack.views.details import details_view
from bot.slack.views.view_links import OPEN, trend_link
from tests.support.scored_judgments import ETH_CORRECT, scored
from tests.support.slack_server.block_checks import block_problems

VIEW = "https://judgebot.example.com/view"


def dumped(blocks) -> str:
    return json.dumps([block.to_dict() for block in blocks])


@pytest.mark.parametrize("status", ["scored", "error"])
def test_a_card_links_to_its_row_only_when_view_url_is_set(rubrics, status) -> None:
    rubric = rubrics.get("eth")
    judgment = scored(rubric, ETH_CORRECT, **({"status": "error", "error": "timeout"} if status == "error" else {}))
    linked = result_card(judgment, rubric, view_url=VIEW)
    footer = linked.blocks[-1].to_dict()
    assert f"<{VIEW}/rows/{judgment.id}|{OPEN}>" in footer["elements"][0]["text"]
    assert block_problems([block.to_dict() for block in linked.blocks]) == []
    plain = result_card(judgment, rubric)
    assert OPEN not in dumped(plain.blocks) and "/rows/" not in dumped(plain.blocks)


def test_details_link_to_the_row_and_a_digest_to_the_trend(rubrics) -> None:
    judgment = scored(rubrics.get("eth"), ETH_CORRECT)
    view, _ = details_view(judgment, view_url=VIEW)
    assert f"<{VIEW}/rows/{judgment.id}|{OPEN}>" in json.dumps(view.to_dict())
    assert OPEN not in json.dumps(details_view(judgment)[0].to_dict())
    assert trend_link(VIEW, "C0GENERAL") == f"<{VIEW}/trend?channel=C0GENERAL|{OPEN}>"
    assert trend_link(None, "C0GENERAL") == ""


def test_view_url_is_a_base_url_that_cannot_break_a_link() -> None:
    assert Settings(_env_file=None, view_url=VIEW + "/").view_url == VIEW
    for bad in ("judgebot.example.com/view", "https://x.example.com/view?a=1", "https://x.example.com/a|b",
                "javascript:alert(1)"):
        with pytest.raises(ValidationError):
            Settings(_env_file=None, view_url=bad)
