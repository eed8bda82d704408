"""The judge's client as the settings describe it: its endpoint, model, key (never one of judgebot's own secrets) and
limits."""

from __future__ import annotations

import os

from bot.config import Settings
from bot.errors import SetupError
from bot.llm.client import JudgeClient, make_judge_client
from bot.llm.limiters import LIMITERS
from bot.llm.prices import load_prices
from bot.llm.sampling import Effort

OWN_SECRETS = frozenset({"DATABASE_URL", "JUDGEBOT_DB", "MCP_TOKEN", "JUDGEBOT_MCP_TOKEN"})


def own_secret(name: str) -> bool:
    """Whether the environment variable `name` holds one of judgebot's own secrets (any of Slack's, the database's
    URL, the MCP server's token), which no judge's key may be read from."""
    upper = name.upper()
    return upper.startswith("SLACK_") or upper in OWN_SECRETS


def judge_client_from(settings: Settings, *, model: str | None = None, base_url: str | None = None,
                      key_env: str | None = None, temperature: float | None = None,
                      concurrency: int | None = None, effort: Effort | None = None) -> JudgeClient:
    """The JudgeClient the settings describe; `model`, `temperature`, `concurrency` and `effort` (the reasoning
    effort of one judge) override theirs. A model the price table lists is sent only what it accepts.

    A judge at its own `base_url` is never sent the configured endpoint's key (OPENAI_API_KEY), only the one the
    variable `key_env` holds; SetupError when that variable is not set.
    """
    if key_env is not None:
        if own_secret(key_env):
            raise SetupError(f"judge {model or settings.judge_model}: key_env {key_env} names one of judgebot's own "
                             "secrets (Slack's tokens and signing secret, the database URL): it is never sent to a "
                             "judge. Put the judge's key in a variable of its own and name that one")
        if not os.environ.get(key_env):
            raise SetupError(f"judge {model or settings.judge_model}: the environment variable {key_env} that should "
                             "hold its key is not set")
        key: str | None = os.environ[key_env]
    elif base_url is not None:
        key = None
    else:
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    LIMITERS.configure(requests=settings.judge_rpm, tokens=settings.judge_tpm, window=settings.judge_rate_window)
    return make_judge_client(
        api_key=key, base_url=base_url or settings.openai_base_url, model=model or settings.judge_model,
        timeout=settings.judge_timeout,
        temperature=settings.judge_temperature if temperature is None else temperature,
        max_retries=settings.judge_max_retries, concurrency=concurrency or settings.concurrency,
        reasoning_effort=effort or settings.judge_reasoning_effort,
        max_completion_tokens=settings.judge_max_completion_tokens, table=load_prices(settings.judge_prices),
        effort_from=f"the judge {model}'s effort" if effort else "JUDGE_REASONING_EFFORT",
    )
