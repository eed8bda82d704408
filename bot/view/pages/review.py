"""The review queue in the browser: a channel's open cases, and labeling them one at a time: the next case taken
(offered to this person, as Slack's review card and `judgebot review label` take it), shown blind when the channel
reviews blind, and the person's pass/fail, tag and note saved as the same label those save."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.store import ANY_TEAM, OPEN, ReviewCase, get_judgment, open_cases, queue_channels, review_case, skip_case
from bot.trust.labeling import label_case
from bot.trust.labels import HumanValues, tag_order
from bot.trust.review import REASONS
from bot.trust.review_files import is_blind
from bot.trust.review_queue import next_case
from bot.view.context import base_of, rubrics, store, viewer
from bot.view.security import FORM
from bot.view.templates import query, render
from bot.view.viewer import TERMINAL

LISTED = 200  # open cases the queue page lists
NOTE_LENGTH = 3000  # what Slack's label form takes
WINNERS = {"a": "A", "b": "B", "tie": "tie"}  # a pair's label: the better answer


def channel_param(channel: str | None) -> str:
    """How a page's address names a channel (TERMINAL for the terminal's queue)."""
    return TERMINAL if channel is None else channel


async def queue_page(request: web.Request) -> web.StreamResponse:
    """GET /review?channel=C: the channel's open cases, oldest first, and the button that takes the next one."""
    who = viewer(request)
    channel = who.channel(request.query.get("channel"))
    history = store(request)
    cases = open_cases(history, team_id=ANY_TEAM if channel else None, channel_id=channel, limit=LISTED)
    blind = bool(cases) and is_blind(history, cases[0][0])
    queues = queue_channels(history, channels=who.channels)
    return render(request, "review.html", title=f"Review queue of {'the terminal' if channel is None else channel}",
                  cases=cases, blind=blind, reasons=REASONS, queues=queues, channel=channel_param(channel),
                  empty=request.query.get("empty") == "1")


async def take_next(request: web.Request) -> web.StreamResponse:
    """POST /review/next: the next case of the channel's queue offered to this person; to its page, or back to the
    queue saying none waits for them."""
    who = viewer(request)
    channel = who.channel(str(request[FORM].get("channel") or ""))
    loaded = rubrics(request)
    offered = next_case(store(request), team_id=ANY_TEAM if channel else None, channel_id=channel, user_id=who.user_id,
                        rubric_of=lambda made: loaded.exact(made.rubric_name, made.rubric_hash))
    if offered is None:
        raise web.HTTPSeeOther(base_of(request) + "/review" + query({"channel": channel_param(channel), "empty": "1"}))
    raise web.HTTPSeeOther(f"{base_of(request)}/review/cases/{offered.case.id}")


def visible_case(request: web.Request) -> ReviewCase:
    """The case the address names, when the viewer may see its channel; 404 otherwise."""
    case = review_case(store(request), int(request.match_info["case_id"]))
    if case is None or not viewer(request).sees(case.channel_id):
        raise web.HTTPNotFound(text="No such case here.")
    return case


def _labeling(request: web.Request, case: ReviewCase, *, problem: str | None = None, status: int = 200,
              said: dict[str, Any] | None = None) -> web.Response:
    history = store(request)
    judgment = get_judgment(history, case.judgment_id)
    if judgment is None:
        raise web.HTTPNotFound(text="The row of this case was removed.")
    rubric = rubrics(request).exact(judgment.rubric_name, judgment.rubric_hash)
    return render(request, "label.html", title=f"Label a case of {judgment.rubric_name}", case=case, row=judgment,
                  rubric=rubric, blind=is_blind(history, case), tags=tag_order(rubric) if rubric else [],
                  tag_name=rubric.headline.tag if rubric else None, open=case.state == OPEN,
                  channel=channel_param(case.channel_id), reason=REASONS.get(case.reason, case.reason),
                  problem=problem, said=said or {}, status=status, passages=_passages(judgment.context))


def _passages(context: str | None) -> list[str]:
    from bot.records import context_of

    return context_of(context) or []


async def case_page(request: web.Request) -> web.StreamResponse:
    """GET /review/cases/{id}: the case's texts, the judge's verdict unless the channel reviews blind, and the form."""
    return _labeling(request, visible_case(request))


async def label_case_form(request: web.Request) -> web.StreamResponse:
    """POST /review/cases/{id}/label: the person's label saved (replacing theirs of the case), the case closed; to
    the row, now showing the judge's verdict beside the label."""
    case = visible_case(request)
    history = store(request)
    judgment = get_judgment(history, case.judgment_id)
    rubric = rubrics(request).exact(judgment.rubric_name, judgment.rubric_hash) if judgment is not None else None
    if judgment is None or rubric is None:
        raise web.HTTPNotFound(text="This case's row or its rubric (that very version) is no longer here to label.")
    form = request[FORM]
    said = {key: str(form.get(key) or "").strip() for key in ("passed", "tag", "note", "winner")}
    if judgment.answer_b is not None:
        if said["winner"] not in WINNERS:
            return _labeling(request, case, problem="Say which answer is better: A, B or a tie.", status=400, said=said)
        human = HumanValues(values={"winner": WINNERS[said["winner"]]})
    else:
        if said["passed"] not in ("pass", "fail"):
            return _labeling(request, case, problem="Say whether the answer passes or fails.", status=400, said=said)
        values: dict[str, Any] = {}
        if said["tag"]:
            tags = tag_order(rubric)
            if rubric.headline.tag is None or said["tag"] not in tags:
                return _labeling(request, case, problem="Pick one of the rubric's tags, or none.", status=400,
                                 said=said)
            values[rubric.headline.tag] = said["tag"]
        human = HumanValues(values=values, passed=said["passed"] == "pass")
    if len(said["note"]) > NOTE_LENGTH:
        return _labeling(request, case, problem=f"A note holds at most {NOTE_LENGTH:,} characters.", status=400,
                         said=said)
    label_case(history, judgment, rubric, human, user_id=viewer(request).user_id, note=said["note"] or None)
    raise web.HTTPSeeOther(f"{base_of(request)}/rows/{judgment.id}?saved=1")


async def skip_case_form(request: web.Request) -> web.StreamResponse:
    """POST /review/cases/{id}/skip: the case goes to someone else (and back to this person tomorrow)."""
    case = visible_case(request)
    skip_case(store(request), case_id=case.id, user_id=viewer(request).user_id)
    raise web.HTTPSeeOther(base_of(request) + "/review" + query({"channel": channel_param(case.channel_id)}))
