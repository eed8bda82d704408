"""How a channel's rows are judged: `/judge default judge [<model>|none]` (its own judge shown, or set) and `/judge
default samples N` (how many times each row is judged); set by admins only, said in the channel and recorded with who
set it."""

from __future__ import annotations

from typing import Any

from bot.errors import SetupError
from bot.slack.admins import ADMINS_ONLY, admin_refusal
from bot.slack.commands.parsing import SetJudge, SetSamples
from bot.slack.context import Context
from bot.slack.messenger import post_problem
from bot.slack.text import escape
from bot.slack.views.blocks import notice
from bot.store import channel_judge, judge_of_channel, set_channel_judge, set_default_samples

NOT_ADMIN = (
    f"{ADMINS_ONLY} change this channel's judge. `/judge default judge` shows which judges here."
)
NOT_ADMIN_SAMPLES = (
    f"{ADMINS_ONLY} change how many times each row is judged in this channel: it multiplies what every judgment "
    "here costs. To judge one request several times, write `samples=N` in it (`/judge eth samples=3 question || "
    "reference || answer`, or `samples: 3` with a shared file)."
)


class JudgeCommands:
    """The channel-judge subcommands of one bot."""

    def __init__(self, ctx: Context, admins: frozenset[str]) -> None:
        self.ctx, self.admins = ctx, admins

    def handlers(self) -> dict[type, Any]:
        """Each parsed subcommand, and the method that answers it."""
        return {SetJudge: self.on_judge, SetSamples: self.on_samples}

    async def on_judge(self, parsed: SetJudge, command: dict[str, Any]) -> None:
        """Show the channel's judge, or set it (admins only)."""
        if parsed.show:
            await self.show(command)
        else:
            await self.set(command, parsed.model, note=None, effort=parsed.effort)

    async def show(self, command: dict[str, Any]) -> None:
        """Which judge judges cards and files in this channel, and who chose it."""
        team, channel = command["team_id"], command["channel_id"]
        choice = await self.ctx.db(channel_judge, team_id=team, channel_id=channel)
        configured = escape(self.ctx.judge.model)
        if choice is None or choice.judge_model is None:
            text = f"<#{channel}> is judged by the bot's judge, `{configured}`."
            if choice is not None:
                text += f" <@{choice.set_by}> went back to it on {choice.set_at:%Y-%m-%d}."
        else:
            at = f" at reasoning effort {escape(choice.reasoning_effort)}" if choice.reasoning_effort else ""
            text = (f"<#{channel}> is judged by its own judge, `{escape(choice.judge_model)}`{at}, set by "
                    f"<@{choice.set_by}> on {choice.set_at:%Y-%m-%d} (the bot's judge is `{configured}`).")
            if choice.note:
                text += f"\n{escape(choice.note)}"  # why: such as the comparison it followed, with its figures
        warnings = await self.ctx.judge_warnings(team, channel)
        await self.ctx.say.tell(command.get("response_url"), "\n".join([text, *(f":warning: {escape(w)}"
                                                                               for w in warnings)]))

    async def set(self, command: dict[str, Any], model: str | None, *, note: str | None, effort: str | None = None) -> bool:
        """Set the channel's judge (None: back to the bot's) at its reasoning `effort` (None: the bot's setting),
        recorded with who did and why, and say so in the channel; False when refused or when it could not be said
        (then it stays as it was)."""
        team, channel, user = command["team_id"], command["channel_id"], command["user_id"]
        where = command.get("response_url")
        refusal = await admin_refusal(self.ctx.client, self.admins, user=user, team=team, not_admin=NOT_ADMIN)
        if refusal is not None:
            await self.ctx.say.tell(where, refusal)
            return False
        before = await self.ctx.db(channel_judge, team_id=team, channel_id=channel)
        try:  # an effort the model refuses is refused now, not by the first card judged with it
            self.ctx.bench.panel(1, model, effort)
        except SetupError as err:
            await self.ctx.say.tell(where, f"{escape(str(err))}. The judge stays as it was.")
            return False
        await self.ctx.db(set_channel_judge, team_id=team, channel_id=channel, judge_model=model, user_id=user,
                          note=note, effort=effort)
        was = f"`{escape(before.judge_model)}`" if before is not None and before.judge_model else \
            f"the bot's judge (`{escape(self.ctx.judge.model)}`)"
        at = f" at reasoning effort {escape(effort)}" if model and effort else ""
        text = (f"<@{user}> set this channel's judge to `{escape(model)}`{at} (it was {was}): cards and files judged here "
                "from now on use it, and the digest marks the week it changed." if model else
                f"<@{user}> set this channel back to the bot's judge, `{escape(self.ctx.judge.model)}` (it was {was}).")
        sent = await self.ctx.say.post(channel, notice(text), what="the channel's judge set")
        if not sent.ok:  # said nowhere: put it back as it was
            await self.ctx.db(set_channel_judge, team_id=team, channel_id=channel,
                              judge_model=before.judge_model if before is not None else None, user_id=user,
                              note="put back: the change could not be said in the channel",
                              effort=before.reasoning_effort if before is not None else None)
            await self.ctx.say.tell(where, f"{post_problem(sent.refusal or '', channel)} The judge stays as it was.")
            return False
        return True

    async def on_samples(self, parsed: SetSamples, command: dict[str, Any]) -> None:
        """`/judge default samples N` (admins only): how many times each row judged here is judged, and what that
        costs, said in the channel."""
        team, channel, user = command["team_id"], command["channel_id"], command["user_id"]
        refusal = await admin_refusal(self.ctx.client, self.admins, user=user, team=team, not_admin=NOT_ADMIN_SAMPLES)
        if refusal is not None:
            await self.ctx.say.tell(command.get("response_url"), refusal)
            return
        await self.ctx.db(set_default_samples, team_id=team, channel_id=channel,
                          samples=None if parsed.samples == 1 else parsed.samples, user_id=user)
        own = await self.ctx.db(judge_of_channel, team_id=team, channel_id=channel)
        judges = len(self.ctx.bench.panel(parsed.samples, own).clients)  # how many judges, whatever their effort
        if parsed.samples > 1:
            text = (f"<@{user}> set this channel to judge each row {parsed.samples} times: each verdict shows how far "
                    "the samples agree, and rows where they split are marked unsure. "
                    f"{cost_of(parsed.samples, judges)}")
        else:
            text = f"<@{user}> set this channel to judge each row once (unless its rubric asks for more)."
        await self.ctx.say.reply(command.get("response_url"), {**notice(text), "response_type": "in_channel"})


def cost_of(samples: int, judges: int) -> str:
    """What judging each row `samples` times costs, against judging it once, with `judges` judges asked each time."""
    asked = (f"{samples * judges} requests a row: {judges} judges, {samples} times each" if judges > 1 else
             f"{samples} requests to the judge a row")
    return f"*Each judgment here now costs {samples}x* what one judged once does ({asked})."
