"""The judge's client as the settings describe it: its endpoint, model, key (never one of judgebot's own secrets) and
limits."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI, DefaultAioHttpClient

from bot.config import Settings
from bot.errors import SetupError
from bot.llm.client import CONNECT_TIMEOUT, OUTAGE_BUDGET, RATE_LIMIT_BUDGET, JudgeClient
from bot.llm.endpoints import azure_v1_url, on_azure
from bot.llm.limiters import LIMITERS
from bot.llm.pacing import Throttle
from bot.llm.prices import PriceTable, load_prices
from bot.llm.responses_api import Api, api_for
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
        api=api_for(settings.judge_api, base_url or settings.openai_base_url),
    )


def make_judge_client(
    *, api_key: str | None, base_url: str | None, model: str, timeout: float, temperature: float = 0.0,
    max_retries: int = 6, concurrency: int = 16, connect_timeout: float = CONNECT_TIMEOUT,
    reasoning_effort: Effort | None = None, max_completion_tokens: int | None = None,
    rate_limit_budget: float = RATE_LIMIT_BUDGET, outage_budget: float = OUTAGE_BUDGET,
    table: PriceTable | None = None, effort_from: str = "JUDGE_REASONING_EFFORT", api: Api = "chat",
) -> JudgeClient:
    """A JudgeClient over a new AsyncOpenAI client; a local server without a key gets a placeholder key.

    SetupError for an Azure OpenAI URL of the deployment form: only the `/openai/v1/` one answers this client.
    """
    if on_azure(base_url) and (better := azure_v1_url(base_url)) is not None:
        raise SetupError(f"OPENAI_BASE_URL is an Azure OpenAI URL of the deployment form, which answers 404 to this "
                         f"client: set it to {better} and JUDGE_MODEL to the deployment name")
    if table is not None and (rules := table.rules_of(model)) is not None:
        rules.effort_for(reasoning_effort, effort_from)  # an effort the model refuses: said before any connection
    # A judge may take minutes to answer, but a host that does not take the connection within seconds is not
    # there: the run says so (and retries) then, not after the whole request timeout.
    limits = openai.Timeout(timeout, connect=min(timeout, connect_timeout))
    # aiohttp as the transport, as the SDK recommends for concurrency: its C parser halves the CPU per request.
    # An endpoint over plain http has no certificate to check (whoever could redirect it can read it already), so
    # the CA bundle, a tenth of a second of start-up, is only loaded for https.
    plain = urlsplit(base_url or "").scheme == "http"
    client = AsyncOpenAI(api_key=api_key or "not-needed", base_url=base_url, timeout=limits, max_retries=0,
                         http_client=DefaultAioHttpClient(timeout=limits, verify=not plain))
    judge = JudgeClient(client, model=model, temperature=temperature, max_retries=max_retries,
                        throttle=Throttle(concurrency), reasoning_effort=reasoning_effort,
                        max_completion_tokens=max_completion_tokens, rate_limit_budget=rate_limit_budget,
                        outage_budget=outage_budget, table=table, effort_from=effort_from, api=api)
    judge.limiter = LIMITERS.of(judge.endpoint, model)  # one per endpoint and model, whichever client asks
    return judge
