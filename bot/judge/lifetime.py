"""The judges in use and the ones whose announced shutdown is near: what every place that shows figures warns of."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from bot.config import Settings
from bot.judge.panel import configured_jury
from bot.llm.shutdowns import (
    COMPARE,
    JudgeShutdown,
    Shutdown,
    builtin_shutdowns,
    load_shutdowns,
    provider_shutdown,
    settings_shutdowns,
    shutting_down,
)

SLACK_COMPARE = "/judge judges compare MODEL"


def judges_in_use(settings: Settings) -> list[str]:
    """The judge models that judge now by the settings: JUDGE_MODEL and the configured jury."""
    return list(dict.fromkeys([settings.judge_model, *(spec.model for spec in configured_jury(settings) or [])]))


def judges_of_run(judge_model: str, judges: list[dict[str, Any]] | None) -> list[str]:
    """The judge models of a run: its jury's, else its one judge."""
    return [str(spec["model"]) for spec in judges] if judges else [judge_model]


def shutdown_advice(shutdown: JudgeShutdown, *, slack: bool = False) -> str:
    """The warning with what to do about it: compare a successor, from the terminal or (`slack`) in the channel."""
    how = f"`{SLACK_COMPARE}` (admins) or `{COMPARE}`" if slack else COMPARE
    return f"{shutdown.text()}. Compare a successor on your labeled cases before then: {how}"


@dataclass(frozen=True, eq=False)
class JudgeWatch:
    """The judges the settings name and their shutdown dates: the shipped table, the dates the judge endpoints' model
    lists gave (which win over it), and JUDGE_SHUTDOWNS (which wins over both): whether the judge of a place is near
    its shutdown."""

    judges: tuple[str, ...] = ()
    table: Mapping[str, Shutdown] = field(default_factory=builtin_shutdowns)
    own: Mapping[str, Shutdown] = field(default_factory=dict)  # JUDGE_SHUTDOWNS's models alone
    # What each endpoint's model list gave, by endpoint then model, and when it was read (naive UTC): filled in by
    # whoever reads the lists (bot.runs.shutdown_reads), at most once a day per endpoint.
    listed: dict[str, dict[str, Shutdown]] = field(default_factory=dict)
    read_at: dict[str, datetime] = field(default_factory=dict)
    reading: dict[str, Any] = field(default_factory=dict)  # the read of an endpoint under way, which others await

    @classmethod
    def from_settings(cls, settings: Settings) -> JudgeWatch:
        """The watch over the configured judges; SetupError when JUDGE_SHUTDOWNS cannot be read."""
        return cls(tuple(judges_in_use(settings)), load_shutdowns(settings.judge_shutdowns),
                   settings_shutdowns(settings.judge_shutdowns))

    def learn(self, endpoint: str, dates: Mapping[str, date], read_at: datetime) -> None:
        """Keep the shutdown dates `endpoint`'s model list gave when read at `read_at` (naive UTC), in place of any
        it gave before."""
        self.listed[endpoint] = {model: provider_shutdown(model, when, endpoint=endpoint, read=read_at.date(),
                                                          table=dict(self.table))
                                 for model, when in dates.items()}
        self.read_at[endpoint] = read_at

    def dates(self) -> dict[str, Shutdown]:
        """Every model's shutdown as it stands: the table's, a model list's over it (of two lists, the sooner date),
        JUDGE_SHUTDOWNS's over both."""
        listed: dict[str, Shutdown] = {}
        for endpoint in sorted(self.listed):
            for model, when in self.listed[endpoint].items():
                if model not in listed or when.shutdown < listed[model].shutdown:
                    listed[model] = when
        return {**self.table, **listed, **self.own}

    def near(self, judges: Iterable[str] | None = None, today: date | None = None) -> list[JudgeShutdown]:
        """The judges (by default the configured ones) that shut down within WARN_DAYS or have, soonest first."""
        return shutting_down(self.judges if judges is None else judges, today or datetime.now(UTC).date(),
                             self.dates())

    def warnings(self, channel_judge: str | None = None, *, slack: bool = False,
                 today: date | None = None) -> list[str]:
        """What to say where figures are read: of a channel's own judge, else of the configured judges."""
        return self.warnings_of([channel_judge] if channel_judge else None, slack=slack, today=today)

    def warnings_of(self, judges: Iterable[str] | None, *, slack: bool = False, today: date | None = None) -> list[str]:
        """What to say of `judges` (such as a run's; None: the configured ones) when a shutdown is near."""
        return [shutdown_advice(found, slack=slack) for found in self.near(judges, today)]
