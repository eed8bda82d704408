"""The judges of a run: one judge model or a jury of them, each asked one or several times per row."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.config import Settings
from bot.errors import SetupError
from bot.llm.client import JudgeClient
from bot.llm.configured import judge_client_from, own_secret
from bot.llm.prices import PriceTable, builtin_prices, load_prices
from bot.llm.sampling import Effort, parse_effort
from bot.yaml_text import load_yaml, yaml_problem

MAX_SAMPLES = 9
MAX_JUDGES = 9
NAME_LENGTH = 128  # the history's judge_model column


class JudgeSpec(BaseModel):
    """One member of a jury: its model, and where it lives when that is not the configured endpoint."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, max_length=NAME_LENGTH)
    base_url: str | None = Field(None, description="its OpenAI-compatible endpoint; default OPENAI_BASE_URL")
    key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                                description="the environment variable holding its key; without it a judge at its "
                                "own base_url gets no key, one at the configured endpoint OPENAI_API_KEY")
    effort: Effort | None = Field(None, description="its reasoning effort; default JUDGE_REASONING_EFFORT")


def judges_from_names(names: str) -> list[JudgeSpec]:
    """A jury of judge models on the configured endpoint, from "m1,m2,m3", each optionally with its reasoning
    effort after a space ("gpt-6-luna low,gpt-6.2-sol medium")."""
    specs = []
    for entry in (part.split() for part in names.split(",") if part.strip()):
        if len(entry) > 2:
            raise SetupError(f"judges {names!r}: {' '.join(entry)!r} is not a model with an optional reasoning effort "
                             "(such as `gpt-6-luna low`)")
        effort = parse_effort(entry[1], f"judges {names!r}, judge {entry[0]}") if len(entry) == 2 else None
        try:
            specs.append(JudgeSpec(model=entry[0], effort=effort))
        except ValidationError as err:
            raise SetupError(f"judges {names!r}: {err.errors()[0]['msg']}") from None
    return check_jury(specs)


def read_judges(path: Path) -> list[JudgeSpec]:
    """The jury a YAML file describes: a list of {model, base_url, key_env}, or the same under `judges:`."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise SetupError(f"cannot read the judges file {path}: {yaml_problem(err)}") from None
    entries = data.get("judges") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise SetupError(f"the judges file {path} must be a list of judges, each with a model (and optionally a "
                         "base_url and the key_env naming the environment variable that holds its key)")
    specs = []
    for number, entry in enumerate(entries, start=1):
        try:
            specs.append(JudgeSpec.model_validate(entry))
        except ValidationError as err:
            problem = err.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "entry"
            raise SetupError(f"the judges file {path}, judge {number}: {where}: {problem['msg']}") from None
        if specs[-1].key_env is not None and own_secret(specs[-1].key_env):
            raise SetupError(f"the judges file {path}, judge {number}: key_env {specs[-1].key_env} names one of "
                             "judgebot's own secrets (Slack's tokens and signing secret, the database URL), which "
                             "are never sent to a judge: put the judge's key in a variable of its own")
    return check_jury(specs, f"the judges file {path}")


def check_jury(specs: list[JudgeSpec], where: str = "the jury") -> list[JudgeSpec]:
    """`specs`, if they make a jury: one to MAX_JUDGES judges, each a different model."""
    if not specs:
        raise SetupError(f"{where} names no judge")
    if len(specs) > MAX_JUDGES:
        raise SetupError(f"{where} has {len(specs)} judges; at most {MAX_JUDGES}")
    models = [spec.model for spec in specs]
    if repeated := sorted({model for model in models if models.count(model) > 1}):
        raise SetupError(f"{where} names {', '.join(repeated)} more than once; to ask a judge several times, use "
                         "samples")
    return specs


def check_samples(samples: int) -> int:
    """`samples` if it is a number of samples judgebot takes (1 to MAX_SAMPLES)."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise SetupError(f"samples must be from 1 to {MAX_SAMPLES}, not {samples}")
    return samples


def panel_name(models: list[str]) -> str:
    """How the history names a judge or jury: the model, or the jury's models joined by "+" (cut with a hash)."""
    name = "+".join(models)
    if len(name) <= NAME_LENGTH:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"{name[:NAME_LENGTH - 14]}…+{digest}"


@dataclass
class Panel:
    """The judges of one run, each judging every row `samples` times."""

    clients: list[JudgeClient]
    samples: int = 1
    specs: list[JudgeSpec] | None = None  # as saved with the run; None for the configured judge alone
    owned: bool = True  # its clients' connections are its own, closed with it (not a bot's shared ones)
    prices: PriceTable = field(default_factory=builtin_prices)  # what each judgment costs, recorded with it

    @classmethod
    def solo(cls, client: JudgeClient) -> Panel:
        """One judge, once per row."""
        return cls([client])

    @property
    def single(self) -> bool:
        """One judgment per row: the plain path, with no samples kept apart."""
        return len(self.clients) == 1 and self.samples == 1

    @property
    def name(self) -> str:
        """The judge model a row's verdict is recorded under."""
        return panel_name([client.model for client in self.clients])

    @property
    def temperature(self) -> float | None:
        """The judges' sampling temperature."""
        return self.clients[0].temperature

    @property
    def slots(self) -> list[tuple[JudgeClient, int]]:
        """Every judgment a row gets: each judge, each sample number from 1."""
        return [(client, number) for client in self.clients for number in range(1, self.samples + 1)]

    def run_fields(self) -> dict[str, Any]:
        """What a run keeps so that a resume asks the same judges the same way."""
        specs = [spec.model_dump(exclude_none=True) for spec in self.specs] if self.specs else None
        return {"judge_model": self.name, "samples": self.samples, "judges": specs,
                "temperature": self.temperature if not self.single else None}

    async def aclose(self) -> None:
        """Close every judge's HTTP connections, when they are its own."""
        if self.owned:
            for client in self.clients:
                await client.aclose()

    async def __aenter__(self) -> Panel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@dataclass
class Bench:
    """The judges a long-running bot can ask, built once: its judge, and the jury of JUDGES or JUDGES_FILE."""

    judge: JudgeClient
    jury: list[JudgeClient]
    specs: list[JudgeSpec] | None
    sample_temperature: float
    unsure_spread: float
    prices: PriceTable = field(default_factory=builtin_prices)

    def panel(self, samples: int, judge_model: str | None = None, effort: str | None = None) -> Panel:
        """The jury (else the judge), or the one `judge_model` a channel chose (at its `effort`), each asked `samples`
        times per row, over the bot's own connections."""
        own_effort = parse_effort(effort, f"the channel's judge {judge_model}") if judge_model and effort else None
        members = ([self.judge.sibling(model=judge_model, temperature=self.judge.temperature, effort=own_effort,
                                       effort_from=f"the channel's judge {judge_model}" if own_effort else None)]
                   if judge_model else self.jury or [self.judge])
        if samples > 1:
            members = [member.sibling(temperature=self.sample_temperature) for member in members]
        # A channel's judge with its own effort is recorded with it, so that a run resumed later asks at that effort.
        specs = [JudgeSpec(model=judge_model, effort=own_effort)] if judge_model and own_effort else (
            self.specs if self.jury and not judge_model else None)
        return Panel(members, check_samples(samples), specs, owned=False, prices=self.prices)

    def panel_for(self, *, judge_model: str, samples: int, judges: list[dict[str, Any]] | None,
                  temperature: float | None) -> Panel:
        """The panel a run was started with; SetupError when one of its judges lives at an endpoint this bot does
        not know any more."""
        known = {client.model: client for client in [self.judge, *self.jury]}
        members = []
        for judge in judges or [{"model": judge_model}]:
            model = str(judge.get("model"))
            base = known.get(model)
            if base is None:
                if judge.get("base_url"):
                    raise SetupError(f"the run was judged with {model} at {judge['base_url']}, which this bot is not "
                                     "configured with any more (JUDGES_FILE); configure it again, or share the file "
                                     "again to judge it with today's judges")
                base = self.judge.sibling(model=model, temperature=self.judge.temperature)
            if effort := judge.get("effort"):  # the effort the run was started at, whoever's judge it was
                base = base.sibling(temperature=base.temperature, effort=parse_effort(str(effort), f"the run's judge {model}"),
                                    effort_from=f"the judge {model}'s effort")
            members.append(base if temperature is None else base.sibling(temperature=temperature))
        return Panel(members, check_samples(samples), None, owned=False, prices=self.prices)

    async def aclose(self) -> None:
        """Close every judge's HTTP connections."""
        for client in [self.judge, *self.jury]:
            await client.aclose()


def configured_jury(settings: Settings) -> list[JudgeSpec] | None:
    """The jury JUDGES_FILE or JUDGES names (SetupError when it cannot be read); None when they name none."""
    if settings.judges_file:
        return read_judges(settings.judges_file)
    return judges_from_names(settings.judges) if settings.judges.strip() else None


def configured_judge_name(settings: Settings) -> str:
    """The name the history gives verdicts of the configured jury (JUDGES_FILE, JUDGES), else of JUDGE_MODEL."""
    specs = configured_jury(settings)
    return panel_name([spec.model for spec in specs]) if specs else settings.judge_model


def open_bench(settings: Settings) -> Bench:
    """The bot's judges: JUDGE_MODEL, and the jury JUDGES_FILE or JUDGES names (SetupError when it cannot be read)."""
    specs = configured_jury(settings)
    judge = open_panel(settings).clients[0]
    jury = open_panel(settings, specs=specs).clients if specs else []
    return Bench(judge, jury, specs, settings.sample_temperature, settings.unsure_spread,
                 load_prices(settings.judge_prices))


def open_panel(settings: Settings, *, specs: list[JudgeSpec] | None = None, samples: int = 1,
               concurrency: int | None = None, temperature: float | None = None) -> Panel:
    """The judges `specs` name (by default the configured judge), each asked `samples` times per row.

    Several samples use the sampling temperature (SAMPLE_TEMPERATURE) unless `temperature` is given.
    SetupError when a judge's key variable is not set.
    """
    check_samples(samples)
    if temperature is None:
        temperature = settings.sample_temperature if samples > 1 else settings.judge_temperature
    chosen = specs or [JudgeSpec(model=settings.judge_model)]
    clients = [judge_client_from(settings, model=spec.model, base_url=spec.base_url, key_env=spec.key_env,
                                 temperature=temperature, concurrency=concurrency, effort=spec.effort)
               for spec in chosen]
    return Panel(clients, samples, specs, prices=load_prices(settings.judge_prices))


def reopen_panel(settings: Settings, *, judge_model: str, samples: int, judges: list[dict[str, Any]] | None,
                 temperature: float | None, concurrency: int | None = None) -> Panel:
    """The panel a run was started with (its saved judges, samples and temperature), to resume it the same way."""
    try:
        specs = [JudgeSpec.model_validate(judge) for judge in judges] if judges else [JudgeSpec(model=judge_model)]
    except ValidationError as err:
        raise SetupError(f"the run's saved judges cannot be read: {err.errors()[0]['msg']}") from None
    return open_panel(settings, specs=specs, samples=samples, concurrency=concurrency, temperature=temperature)
