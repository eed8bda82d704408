"""What judging costs: the price table of known judge models (a data file with its date), settings' additions, and
the cost of a judgment's tokens."""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.errors import SetupError
from bot.yaml_text import load_yaml, yaml_problem

# A dated snapshot of a model: gpt-4o-2024-08-06, gpt-4-0613 (a four-digit month and day), claude-haiku-4-5-20251001.
SNAPSHOT = re.compile(r"^(?P<base>.+?)-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")
VENDORS = ("openai/", "anthropic/")  # how a router such as OpenRouter names the same model


class Price(BaseModel):
    """USD per million tokens of one model: input, cached input (when the provider discounts it) and output."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)
    context: int | None = Field(None, gt=0, description="the model's context window in tokens, as its provider lists it")

    def cost(self, tokens_in: int, tokens_out: int, tokens_cached: int = 0, *, share: float = 1.0) -> float:
        """USD of one judgment's tokens, its cached input at the cached rate; `share` of it through the Batch API."""
        cached = min(tokens_cached, tokens_in) if self.cached_input is not None else 0
        cached_rate = self.cached_input if self.cached_input is not None else self.input
        total = (tokens_in - cached) * self.input + cached * cached_rate + tokens_out * self.output
        return total * share / 1_000_000


class PriceTable(BaseModel):
    """The judge prices in force: the table's date, the Batch API's share of the live price, and each model's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    as_of: date
    batch_share: float = Field(0.5, gt=0, le=1)
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

    def cost(self, model: str, tokens_in: int, tokens_out: int, tokens_cached: int = 0, *,
             batch: bool = False) -> float | None:
        """USD of a judgment's tokens by `model`, None when its price is unknown (a judgment that used no tokens is
        free whatever the model)."""
        if tokens_in == tokens_out == 0:
            return 0.0
        price = self.price_of(model)
        return None if price is None else price.cost(tokens_in, tokens_out, tokens_cached,
                                                     share=self.batch_share if batch else 1.0)


class PriceFile(BaseModel):
    """A JUDGE_PRICES file: prices that add to or override the built-in table."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, Price]


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
    models = {**table.models, **{name.strip().lower(): price for name, price in added.models.items()}}
    return table.model_copy(update={"models": models})
