"""What the text that comes with a shared file asks for: a rubric, a model under test and samples."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.errors import CommandError, RubricError
from bot.rubric import Rubric, RubricSet
from bot.slack.commands.parsing import samples_count
from bot.slack.text import escape, unescape

SHARE_FIELD = re.compile(r"\b(rubric|model|samples)\s*[:=]\s*(\S+)", re.IGNORECASE)


@dataclass(frozen=True)
class ShareText:
    """What the message that came with a file asks for: a rubric, a model under test and samples, each if named."""

    rubric: Rubric | None = None
    model: str | None = None
    samples: int | None = None


def parse_share_text(text: str, rubrics: RubricSet) -> ShareText:
    """What the words with a file name; CommandError for an unknown rubric after `rubric:`.

    `rubric: <name or alias>`, `model: <name>` and `samples: N` anywhere; a message of one word, a rubric's name
    or alias; in longer text, a word that is a rubric's name (aliases such as "five" are common words).
    """
    text = unescape(re.sub(r"<[@#!][^>]*>", " ", text or ""))
    named = {key.lower(): value.strip("`*_,.;") for key, value in SHARE_FIELD.findall(text)}
    model = named.get("model") or None
    samples = samples_count(named["samples"]) if "samples" in named else None
    if "rubric" in named:
        try:
            return ShareText(rubrics.get(named["rubric"]), model, samples)
        except RubricError as err:
            raise CommandError(escape(str(err))) from None
    words = [word.strip("-.") for word in re.findall(r"[\w\-.]+", SHARE_FIELD.sub(" ", text))]
    if len(words) == 1:
        return ShareText(rubrics.find(words[0]), model, samples)
    for word in words:
        found = rubrics.find(word)
        if found is not None and found.name == word.lower():
            return ShareText(found, model, samples)
    return ShareText(None, model, samples)
