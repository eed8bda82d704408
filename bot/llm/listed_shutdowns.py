"""The shutdown dates a judge endpoint's model list gives (OpenAI's GET /v1/models, each model's `shutdown_date`),
read within seconds; an endpoint that has no such list or field gives none."""

from __future__ import annotations

import asyncio
import logging
from datetime import date
from typing import Any

import openai
from openai import AsyncOpenAI
from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

READ_SECONDS = 4.0  # the most one read of the model list may take, connection included: it never holds up a judgment


class _Listed(BaseModel):
    """One model of the list: its id, and its shutdown date where the endpoint gives the field at all."""

    id: str
    shutdown_date: date | None = None


class _ModelList(BaseModel):
    data: list[dict[str, Any]]


def shutdown_dates(models: Any) -> dict[str, date] | None:
    """The models a /models reply gives a shutdown date, by lower-case id; None when no model carries the field (the
    endpoint does not tell shutdowns), {} when it does and none is dated. Entries that do not read are left out."""
    try:
        listed = _ModelList.model_validate(models).data
    except ValidationError:
        return None
    if not any(isinstance(entry, dict) and "shutdown_date" in entry for entry in listed):
        return None
    found = {}
    for entry in listed:
        try:
            model = _Listed.model_validate(entry)
        except ValidationError:
            continue
        if model.shutdown_date is not None:
            found[model.id.strip().lower()] = model.shutdown_date
    return found


class ListUnanswered(Exception):
    """The endpoint's model list did not come: the connection failed or it took longer than allowed."""


async def read_shutdown_dates(client: AsyncOpenAI, *, seconds: float = READ_SECONDS) -> dict[str, date] | None:
    """The shutdown dates the endpoint of `client` lists (see `shutdown_dates`); None when it lists none or answers
    with an error (a 404, a refused key). ListUnanswered when no answer came within `seconds`."""
    timeout = openai.Timeout(seconds, connect=seconds)
    try:
        async with asyncio.timeout(seconds):
            models = await client.get("/models", cast_to=object, options={"timeout": timeout, "max_retries": 0})
    except (openai.APIConnectionError, TimeoutError) as err:  # a timeout is a connection error to the SDK
        raise ListUnanswered(f"{client.base_url}models: {err or type(err).__name__}") from None
    except (openai.APIError, ValueError) as err:  # a 404, a 401, a page that is not JSON
        log.debug("no shutdown dates from %smodels: %s", client.base_url, err)
        return None
    return shutdown_dates(models)
