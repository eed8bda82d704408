"""When judge models stop answering: the shutdown dates providers announced (a data file, each with its source and
the day it was read), settings' additions, and the notice a judge near its date earns."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from bot.errors import SetupError
from bot.llm.prices import SNAPSHOT, VENDORS
from bot.yaml_text import load_yaml, yaml_problem

WARN_DAYS = 60  # a judge whose shutdown is this close (or past) is named wherever its figures are read
COMPARE = "judgebot judges compare --rubric NAME --to MODEL"


class Shutdown(BaseModel):
    """One model's announced shutdown: the day, where it was announced, and the day that was read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    shutdown: date
    source: str
    read: date
    announced: date | None = None  # the day the provider announced it, where the source says
    replacement: str | None = None  # the model the provider names to replace it, where it names one


class ShutdownFile(BaseModel):
    """The shutdown table, or a JUDGE_SHUTDOWNS file that adds to or overrides it."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, Shutdown]


@dataclass(frozen=True)
class JudgeShutdown:
    """A judge in use and its announced shutdown, as of `today`."""

    judge: str
    when: Shutdown
    today: date

    @property
    def days_left(self) -> int:
        return (self.when.shutdown - self.today).days

    def text(self) -> str:
        """"The judge gpt-4o-mini shuts down on 2027-01-14, in 48 days (OpenAI's deprecations page, read
        2026-11-27)"; a date passed says so."""
        days = self.days_left
        when = (f"shuts down on {self.when.shutdown.isoformat()}, in {days} day{'s' if days != 1 else ''}"
                if days > 0 else f"shuts down today, {self.when.shutdown.isoformat()}" if days == 0 else
                f"was shut down on {self.when.shutdown.isoformat()}, {-days} day{'s' if days != -1 else ''} ago")
        instead = f"; its named replacement is {self.when.replacement}" if self.when.replacement else ""
        return f"The judge {self.judge} {when}{instead} ({self.when.source}, read {self.when.read.isoformat()})"


@cache
def builtin_shutdowns() -> dict[str, Shutdown]:
    """The shutdown table shipped with judgebot."""
    text = resources.files("bot.llm").joinpath("shutdowns.yaml").read_text(encoding="utf-8")
    return ShutdownFile.model_validate(load_yaml(text)).models


@cache
def load_shutdowns(extra: Path | None = None) -> dict[str, Shutdown]:
    """The built-in table with the models of `extra` (a JUDGE_SHUTDOWNS file) added or overriding; SetupError when
    that file cannot be read."""
    return {**builtin_shutdowns(), **settings_shutdowns(extra)}


@cache
def settings_shutdowns(extra: Path | None = None) -> dict[str, Shutdown]:
    """The models of `extra` (a JUDGE_SHUTDOWNS file) alone, by lower-case name; SetupError when it cannot be read."""
    if extra is None:
        return {}
    try:
        added = ShutdownFile.model_validate(load_yaml(extra.read_text(encoding="utf-8")))
    except OSError as err:
        raise SetupError(f"JUDGE_SHUTDOWNS: cannot read {extra}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise SetupError(f"JUDGE_SHUTDOWNS: {extra} is not valid YAML ({yaml_problem(err)})") from None
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in err.errors()[:5])
        raise SetupError(f"JUDGE_SHUTDOWNS: {extra} must list `models:` with shutdown, source and read for each "
                         f"(dates as 2027-01-14): {problems}") from None
    return {name.strip().lower(): entry for name, entry in added.models.items()}


def provider_shutdown(model: str, shutdown: date, *, endpoint: str, read: date,
                      table: dict[str, Shutdown]) -> Shutdown:
    """The shutdown an endpoint's model list gives `model`, with the replacement the table names for it (the list
    names none)."""
    shipped = shutdown_of(model, table)
    return Shutdown(shutdown=shutdown, source=f"the judge endpoint's model list ({endpoint}/models)", read=read,
                    replacement=shipped.replacement if shipped is not None else None)


def shutdown_of(model: str, table: dict[str, Shutdown]) -> Shutdown | None:
    """The announced shutdown of `model` by its exact name or as a dated snapshot of a listed one; None when none."""
    name = model.strip().lower()
    for vendor in VENDORS:
        name = name.removeprefix(vendor)
    if name in table:
        return table[name]
    snapshot = SNAPSHOT.match(name)
    return table.get(snapshot["base"]) if snapshot else None


def shutting_down(judges: Iterable[str], today: date, table: dict[str, Shutdown], *,
                  within: int = WARN_DAYS) -> list[JudgeShutdown]:
    """The judges among `judges` whose shutdown is at most `within` days away (or past), soonest first."""
    found = {}
    for judge in judges:
        when = shutdown_of(judge, table)
        if when is not None and (when.shutdown - today).days <= within:
            found[judge] = JudgeShutdown(judge, when, today)
    return sorted(found.values(), key=lambda item: (item.when.shutdown, item.judge))
