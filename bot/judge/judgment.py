"""One judgment: a rubric and a triple in, a Verdict (scored by the judge or failed by the content-free screen, invalid,
or an error) out; no Slack, no database."""

from __future__ import annotations

from bot.errors import FormulaError, JudgeCallError, RunStopped
from bot.judge.content_free import content_free, screen_flags, screened
from bot.judge.injection_screen import screen
from bot.judge.prompt import build_messages, new_boundary, schema_name
from bot.judge.reply import problems_of, repair_request
from bot.judge.verdicts import Usage, answered, failed
from bot.judge.window import overflow
from bot.llm.answers import Completion
from bot.llm.client import JudgeClient
from bot.llm.prices import PriceTable
from bot.records import RowState, Triple, Verdict
from bot.rubric import Rubric

CUT_OFF = ("the judge's reply was cut off at its token limit (finish_reason=length); raise JUDGE_MAX_COMPLETION_TOKENS "
           "(a reasoning model spends part of it thinking) or shorten the inputs")


async def judge(rubric: Rubric, triple: Triple, client: JudgeClient, *, prices: PriceTable | None = None,
                boundary: str | None = None, batch_reply: Completion | None = None,
                reply_tier: str = "batch") -> Verdict:
    """Judge one triple, with one repair request when the reply is invalid or breaks a rule; with `prices`, what it
    cost.

    Returns a Verdict whatever the judge says; raises RunStopped when no request can succeed. Before any request, the
    texts are screened (the verdict carries the warnings), an answer with nothing to grade is failed without asking
    the judge unless the rubric says `content_free: flag` (then it is flagged), and a prompt longer than the judge
    model's context window (as its endpoint tells it) is an error rather than a prompt cut short. With `batch_reply`
    (the Batch API's reply to the messages fenced with `boundary`), only the repair, when one is needed, is asked
    here, and the reply is costed at the price of `reply_tier` ("batch", or a background window: "2h", "8h").
    """
    flags = screen(rubric, triple)
    if (decided := screened(rubric, client.model, triple, flags)) is not None:
        return decided
    flags = [*screen_flags(content_free(triple)), *flags]
    if batch_reply is None and (reason := await overflow(rubric, triple, client, prices)) is not None:
        return failed(rubric, client.model, triple, reason)
    usage = Usage()
    verdict = await _asked(rubric, triple, client, boundary or new_boundary(), batch_reply, usage, flags)
    verdict.reasoning_effort = client.effort_in_force
    if prices is not None:
        verdict.cost_usd = _cost(prices, client.model, usage, batch_reply, reply_tier)
    return verdict


async def _asked(rubric: Rubric, triple: Triple, client: JudgeClient, boundary: str, batch_reply: Completion | None,
                 usage: Usage, flags: list[str]) -> Verdict:
    """The verdict the judge's replies give: the first request, then one repair."""
    messages = build_messages(rubric, triple, boundary)
    problems: list[str] = []
    completion: Completion | None = None
    for attempt in range(2):
        try:
            completion = batch_reply if attempt == 0 and batch_reply is not None else await client.complete(
                messages, schema_name=schema_name(rubric), schema=rubric.reply_schema)
        except RunStopped:
            raise
        except JudgeCallError as err:
            return answered(RowState.ERROR, rubric, client.model, triple, usage=usage, flags=flags, error=str(err),
                            raw_reply=completion.text if completion else None)
        usage.add(completion)
        reply = {"raw_reply": completion.text}
        if completion.finish_reason == "length":
            return answered(RowState.ERROR, rubric, client.model, triple, usage=usage, flags=flags, error=CUT_OFF,
                            **reply)
        output, problems = problems_of(rubric, triple, completion)
        if output is not None and not problems:
            try:
                scoring = rubric.score(output)
            except FormulaError as err:
                return answered(RowState.ERROR, rubric, client.model, triple, usage=usage, flags=flags, output=output,
                                error=f"rubric formula: {err}", **reply)
            return answered(RowState.SCORED, rubric, client.model, triple, usage=usage, flags=flags, output=output,
                            derived=scoring.derived, headline=scoring.headline, passed=scoring.passed,
                            label=scoring.label, tag=scoring.tag, **reply)
        messages = [*messages, {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": repair_request(problems)}]
    return answered(RowState.INVALID, rubric, client.model, triple, usage=usage, flags=flags,
                    raw_reply=completion.text if completion else None,
                    error="the judge's reply broke the rubric after one repair: " + "; ".join(problems))


def _cost(prices: PriceTable, model: str, usage: Usage, batch_reply: Completion | None,
          reply_tier: str) -> float | None:
    """What a judgment's requests cost, each alone (a prompt over a model's long-prompt threshold is billed at that
    rate for its whole request): a reply that came later at its tier's price (the Batch API's, a background
    window's), the rest (a repair) at the live price. Reasoning tokens are part of a reply's output tokens, billed as
    output."""
    total = 0.0
    for reply in usage.replies:
        cost = prices.request_cost(model, reply.tokens_in, reply.tokens_out, reply.cached_tokens,
                                   tier=reply_tier if reply is batch_reply else None)
        if cost is None:
            return None
        total += cost
    return total
