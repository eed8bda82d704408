"""What judging costs and what judge models accept: the table of known judge models (a data file with its date: each
model's prices, context window, long-prompt rate and reasoning efforts, with where they were read), settings'
additions, and the cost of a request's tokens."""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.errors import SetupError
from bot.llm.sampling import Effort, ModelRules
from bot.yaml_text import load_yaml, yaml_problem

# A dated snapshot of a model: gpt-4o-2024-08-06, gpt-4-0613 (a four-digit month and day), claude-haiku-4-5-20251001.
SNAPSHOT = re.compile(r"^(?P<base>.+?)-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")
VENDORS = ("openai/", "anthropic/")  # how a router such as OpenRouter names the same model


class LongPrompt(BaseModel):
    """A provider's rate for long prompts: a request whose prompt is over `above` input tokens is billed `input` times
    the input and cached rates and `output` times the output rate, for the whole request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    above: int = Field(gt=0)
    input: float = Field(gt=0)
    output: float = Field(gt=0)


class Price(BaseModel):
    """What is known of one model before it is asked: USD per million tokens (input, cached input when the provider
    discounts it, output, and the rate of long prompts), its context window, the reasoning efforts it accepts, and
    where that was read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)
    context: int | None = Field(None, gt=0, description="the model's context window in tokens, as its provider lists it")
    long_prompt: LongPrompt | None = None
    efforts: tuple[Effort, ...] | None = Field(None, min_length=1, description="the reasoning efforts it accepts")
    default_effort: Effort | None = Field(None, description="the effort it uses when none is sent")
    source: str | None = None
    read: date | None = None

    def cost(self, tokens_in: int, tokens_out: int, tokens_cached: int = 0, *, share: float = 1.0,
             long: bool = False) -> float:
        """USD of requests' tokens, their cached input at the cached rate; `share` of it through the Batch API; with
        `long`, these are requests whose prompt was over the long-prompt threshold, billed at that rate."""
        cached = min(tokens_cached, tokens_in) if self.cached_input is not None else 0
        cached_rate = self.cached_input if self.cached_input is not None else self.input
        total_in = (tokens_in - cached) * self.input + cached * cached_rate
        total_out = tokens_out * self.output
        if long and self.long_prompt is not None:
            total_in, total_out = total_in * self.long_prompt.input, total_out * self.long_prompt.output
        return (total_in + total_out) * share / 1_000_000

    def is_long(self, prompt_tokens: int) -> bool:
        """Whether one request with `prompt_tokens` input tokens is billed at the long-prompt rate."""
        return self.long_prompt is not None and prompt_tokens > self.long_prompt.above


class PriceTable(BaseModel):
    """The judge prices in force: the table's date, the Batch API's share of the live price, the share each background
    completion window ("2h", "8h") bills, and each model's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    as_of: date
    batch_share: float = Field(0.5, gt=0, le=1)
    background_shares: dict[str, float] = {"2h": 0.7, "8h": 0.6}
    long_prompts: dict[str, LongPrompt] = {}  # the rates entries name (by a YAML alias), listed once
    models: dict[str, Price]

    def price_of(self, model: str) -> Price | None:
        """The price of `model` by its exact name or as a dated snapshot of a listed one; None when not listed."""
        name = model.strip().lower()
        for vendor in VENDORS:
            name = name.removeprefix(vendor)
        if name in self.models:
            return self.models[name]
        snapshot = SNAPSHOT.match(name)
        return self.models.get(snapshot["base"]) if snapshot else None

    def context_of(self, model: str) -> int | None:
        """The listed context window of `model` (as `price_of` finds it), or None."""
        price = self.price_of(model)
        return None if price is None else price.context

    def rules_of(self, model: str) -> ModelRules | None:
        """The reasoning rules of `model` (as `price_of` finds it) when the table lists its efforts, else None: a model
        whose rules judgebot learns from the endpoint's answers."""
        price = self.price_of(model)
        if price is None or price.efforts is None:
            return None
        return ModelRules(model, price.efforts, price.default_effort)

    def share_of(self, tier: str | None) -> float:
        """The share of the live price a tier bills: "batch" (the Batch API), a background window ("2h", "8h"), or
        live (None)."""
        if tier is None or tier == "live":
            return 1.0
        return self.batch_share if tier == "batch" else self.background_shares[tier]

    def cost(self, model: str, tokens_in: int, tokens_out: int, tokens_cached: int = 0, *,
             batch: bool = False, long: bool = False, tier: str | None = None) -> float | None:
        """USD of requests' tokens by `model`, None when its price is unknown (requests that used no tokens are free
        whatever the model); with `long`, requests whose prompt was over the model's long-prompt threshold; `batch`
        or `tier` (see `share_of`) at that tier's share."""
        if tokens_in == tokens_out == 0:
            return 0.0
        price = self.price_of(model)
        return None if price is None else price.cost(tokens_in, tokens_out, tokens_cached,
                                                     share=self.share_of("batch" if batch else tier), long=long)

    def request_cost(self, model: str, tokens_in: int, tokens_out: int, tokens_cached: int = 0, *,
                     batch: bool = False, tier: str | None = None) -> float | None:
        """USD of one request's tokens by `model`, at the long-prompt rate when its prompt is over the threshold."""
        price = self.price_of(model)
        long = price is not None and price.is_long(tokens_in)
        return self.cost(model, tokens_in, tokens_out, tokens_cached, batch=batch, long=long, tier=tier)


class PriceFile(BaseModel):
    """A JUDGE_PRICES file: prices that add to or override the built-in table."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, Price]


def overriding(shipped: Price | None, given: Price, extra: Path) -> Price:
    """A JUDGE_PRICES entry over the shipped one: its prices replace the shipped prices whole (a cached rate it does
    not give is not kept), and the facts it does not give (context window, long-prompt rate, efforts) stay."""
    source = {} if "source" in given.model_fields_set else {"source": f"JUDGE_PRICES ({extra.name})", "read": None}
    if shipped is None:
        return given.model_copy(update=source)
    return shipped.model_copy(update={"cached_input": None, **source, **given.model_dump(exclude_unset=True)})


@cache
def builtin_prices() -> PriceTable:
    """The price table shipped with judgebot."""
    text = resources.files("bot.llm").joinpath("prices.yaml").read_text(encoding="utf-8")
    return PriceTable.model_validate(load_yaml(text))


@cache
def load_prices(extra: Path | None = None) -> PriceTable:
    """The built-in table with the models of `extra` (a JUDGE_PRICES file) added or overriding; SetupError when that
    file cannot be read."""
    table = builtin_prices()
    if extra is None:
        return table
    try:
        added = PriceFile.model_validate(load_yaml(extra.read_text(encoding="utf-8")))
    except OSError as err:
        raise SetupError(f"JUDGE_PRICES: cannot read {extra}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise SetupError(f"JUDGE_PRICES: {extra} is not valid YAML ({yaml_problem(err)})") from None
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in err.errors()[:5])
        raise SetupError(f"JUDGE_PRICES: {extra} must list `models:` with input and output USD per million tokens "
                         f"for each (cached_input optional): {problems}") from None
    models = dict(table.models)
    for name, price in added.models.items():
        key = name.strip().lower()
        models[key] = overriding(models.get(key), price, extra)
    return table.model_copy(update={"models": models})
