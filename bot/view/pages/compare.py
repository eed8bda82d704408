"""A comparison of two runs, or of two models under test of one run or of a channel's history: the figures of
`judgebot compare` from the same functions (paired on the same questions, each case once, one rubric at a time), and
the biggest regressions and improvements, each linking to its two rows."""

from __future__ import annotations

from aiohttp import web

from bot.errors import UsageError
from bot.store import utcnow
from bot.trust.model_comparison import left_out_text, summary_text, warnings
from bot.trust.sides import comparison
from bot.view.context import rubrics, store, viewer
from bot.view.pages.calibration import since_of
from bot.view.pages.rows import visible_run
from bot.view.templates import render
from bot.view.viewer import TERMINAL

SHOWN = 10  # regressions and improvements listed each


def _run_id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise web.HTTPBadRequest(text=f"{text[:40]!r} is no run number.") from None


async def compare_page(request: web.Request) -> web.StreamResponse:
    """GET /compare?a=RUN&b=RUN, or ?model=A&model=B[&run=ID | &channel=C][&since=30d][&rubric=NAME]; without
    them, the form."""
    who, q = viewer(request), request.query
    models = [model.strip() for model in q.getall("model", []) if model.strip()]
    runs = [_run_id(q[key].strip()) for key in ("a", "b") if q.get(key, "").strip()]
    run = _run_id(q["run"].strip()) if q.get("run", "").strip() else None
    period, back = since_of(q.get("since", ""))
    form = {"a": q.get("a", ""), "b": q.get("b", ""), "models": models + [""] * (2 - len(models)),
            "run": q.get("run", ""), "channel": q.get("channel", ""), "since": period, "rubric": q.get("rubric", "")}
    if not runs and not models:
        return render(request, "compare.html", title="Compare", form=form, reports=None, names=None, problem=None)
    for one in [*runs, *([run] if run is not None else [])]:
        visible_run(request, one)  # 404 for a run of a channel the viewer cannot see
    channel = None if run is not None or runs else who.channel(q.get("channel") or (TERMINAL if who.sees_everything
                                                                                    else None))
    try:
        names, reports = comparison(store(request), rubrics(request), runs=runs, models=models, run=run, channel=channel,
                                    since=None if back is None else utcnow() - back, rubric=q.get("rubric") or None)
    except UsageError as err:
        return render(request, "compare.html", title="Compare", form=form, reports=None, names=None, problem=str(err),
                      status=400)
    a, b = names
    shown = [(found, summary_text(a, b, found), left_out_text(a, b, found), warnings(a, b, found),
              found.regressions[:SHOWN], found.improvements[:SHOWN]) for found in reports]
    return render(request, "compare.html", title=f"{b} against {a}", form=form, reports=shown, names=names,
                  problem=None)


