"""Block Kit of the App Home tab: the person's recent judgments, the rubrics, and how to use the bot."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import Block, DividerBlock, HeaderBlock
from slack_sdk.models.views import View

from bot.rubric import RubricSet
from bot.slack.commands.parsing import USAGE
from bot.slack.views.blocks import context, section, text_sections, warning_sections
from bot.slack.views.commands import judgment_entry, rubric_lines
from bot.slack.views.size_limits import VIEW_BLOCKS
from bot.store import Judgment

HOME_JUDGMENTS = 20


def home_view(rubrics: RubricSet, judgments: list[Judgment], team_url: str | None,
              warnings: Sequence[str] = ()) -> View:
    """The App Home tab: the judge's coming shutdown if near, the person's recent judgments, the rubrics, and how to
    use the bot."""
    blocks: list[Block] = [HeaderBlock(text="judgebot"),
                           *warning_sections(warnings),
                           section("Grade your assistant's answers against reference answers, right in Slack.\n"
                                   + USAGE),
                           DividerBlock(), section("*Your recent judgments*")]
    if judgments:
        blocks += [section(judgment_entry(j, team_url, channel=True)) for j in judgments[:HOME_JUDGMENTS]]
    else:
        blocks.append(context("_None yet: type `/judge eth` in a channel with the bot._"))
    rubric_blocks = text_sections(rubric_lines(rubrics), "*Rubrics*")
    room = VIEW_BLOCKS - len(blocks) - 2
    blocks += [DividerBlock(), *rubric_blocks[:room]]
    if len(rubric_blocks) > room:
        blocks.append(context("_…and more rubrics: `/judge rubrics` lists them._"))
    return View(type="home", blocks=blocks)
