"""The judge model's context window, as its endpoint tells it (Ollama, vLLM, llama.cpp, OpenRouter), and whether a
row's prompt fits in it: a local server given a prompt longer than its context cuts it silently and answers anyway."""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.llm.tokens import MAX_TOKENS_PER_CHAR, texts_tokens

log = logging.getLogger(__name__)

# Ollama's context when neither the model (num_ctx) nor a loaded instance says otherwise. Recent Ollama versions pick
# a larger default by VRAM (32k from 24 GiB, 256k from 48 GiB) or take OLLAMA_CONTEXT_LENGTH, which /api/show does not
# report: the figure is a floor, used only when the server's /api/ps does not tell the context of the loaded model.
OLLAMA_DEFAULT_CONTEXT = 4096
DISCOVERY_TIMEOUT = 10.0  # seconds each discovery request may take; the judge requests keep their own
REPAIR_REQUEST_TOKENS = 150  # the repair request: its fixed text and the problems it quotes
# Hosts whose endpoints say nothing of context sizes (and whose models' contexts dwarf a judge's prompt).
SILENT_HOSTS = ("api.openai.com", ".openai.azure.com", ".cognitiveservices.azure.com", "api.anthropic.com")
_NUM_CTX = re.compile(r"^num_ctx\s+(\d+)\s*$", re.MULTILINE)


class ContextWindow(BaseModel):
    """How many tokens a request to the judge model may hold (prompt and reply), where the figure comes from, and
    how to raise it."""

    model_config = ConfigDict(frozen=True)

    tokens: int = Field(gt=0)
    source: str  # "Ollama's num_ctx", "vLLM's max_model_len"
    advice: str  # how to raise it, with {tokens} for a size that would fit

    def overflow(self, room: float, texts: tuple[str, ...]) -> str | None:
        """Why a prompt of `texts` plus `room` tokens (the rubric's messages, the reply, a repair turn) cannot fit;
        None when it fits. Texts short enough to fit whatever their script are not counted."""
        if room + sum(map(len, texts)) * MAX_TOKENS_PER_CHAR <= self.tokens:
            return None
        needed = room + texts_tokens(texts)
        if needed <= self.tokens:
            return None
        enough = 1 << (int(needed * 1.25) - 1).bit_length()  # the next power of two with a quarter to spare
        return (f"not sent to the judge: the prompt is about {needed:,.0f} tokens with room for the reply and a "
                f"repair, over the judge's context of {self.tokens:,} ({self.source}), which would cut it silently; "
                f"{self.advice.format(tokens=enough)}, or shorten the texts")


def room_for_row(prompt: float, reply: float) -> float:
    """The tokens a row needs besides its own texts: the rubric's messages (`prompt`), the reply, and the repair
    turn (the first reply and a repair request sent back, then the second reply)."""
    return prompt + 2 * reply + REPAIR_REQUEST_TOKENS


def ollama_window(show: dict[str, Any], running: int | None = None) -> ContextWindow | None:
    """The context of an Ollama model from its /api/show reply (and its context_length in /api/ps when loaded)."""
    try:
        reply = _OllamaShow.model_validate(show)
    except ValidationError:
        return None
    architecture = reply.model_info.get("general.architecture")
    trained = reply.model_info.get(f"{architecture}.context_length")
    trained = trained if isinstance(trained, int) and trained > 0 else None
    advice = ("raise it: `PARAMETER num_ctx {tokens}` in the model's Modelfile (then `ollama create`), or "
              "OLLAMA_CONTEXT_LENGTH={tokens} for `ollama serve` (judgebot sees it where `ollama ps` shows a CONTEXT)")
    if running:
        tokens, source = running, "Ollama's context of the loaded model"
    elif (found := _NUM_CTX.search(reply.parameters)) is not None:
        tokens, source = int(found.group(1)), "Ollama's num_ctx"
    else:
        tokens, source = OLLAMA_DEFAULT_CONTEXT, "Ollama's default context, with no num_ctx in the model"
    if trained is not None and trained < tokens:
        return ContextWindow(tokens=trained, source="the model's trained context_length",
                             advice="choose a judge model with a longer context")
    return ContextWindow(tokens=tokens, source=source, advice=advice)


class _OllamaShow(BaseModel):
    """The fields of Ollama's /api/show reply that size the context."""

    parameters: str = ""
    model_info: dict[str, Any] = {}


class _ModelEntry(BaseModel):
    """One model of an endpoint's /models list: vLLM gives max_model_len, OpenRouter context_length."""

    id: str
    max_model_len: int | None = Field(None, gt=0)
    context_length: int | None = Field(None, gt=0)


class _ModelList(BaseModel):
    data: list[_ModelEntry]


class _LlamaSettings(BaseModel):
    n_ctx: int = Field(gt=0)


class _LlamaProps(BaseModel):
    """llama.cpp server's /props: the context of each slot among its default generation settings."""

    default_generation_settings: _LlamaSettings


def listed_window(models: Any, model: str) -> ContextWindow | None:
    """The context of `model` in an endpoint's /models reply (vLLM, OpenRouter), if it says."""
    try:
        listed = _ModelList.model_validate(models)
    except ValidationError:
        return None
    entry = next((entry for entry in listed.data if entry.id == model), None)
    if entry is None:
        return None
    if entry.max_model_len is not None:
        return ContextWindow(tokens=entry.max_model_len, source="vLLM's max_model_len",
                             advice="restart vLLM with a larger --max-model-len (e.g. --max-model-len {tokens})")
    if entry.context_length is not None:
        return ContextWindow(tokens=entry.context_length, source="the endpoint's context_length for the model",
                             advice="choose a judge model with a longer context")
    return None


def llama_cpp_window(props: Any) -> ContextWindow | None:
    """The context of each slot of a llama.cpp server, from its /props reply."""
    try:
        tokens = _LlamaProps.model_validate(props).default_generation_settings.n_ctx
    except ValidationError:
        return None
    return ContextWindow(tokens=tokens, source="llama.cpp's n_ctx per slot",
                         advice="restart llama-server with a larger --ctx-size (shared by its --parallel slots: "
                                "e.g. -c {tokens} -np 1)")


async def discover(client: AsyncOpenAI, model: str) -> ContextWindow | None:
    """The judge model's context window as the endpoint tells it, or None when it does not (or cannot be asked).

    Asks the endpoint's /models (vLLM, OpenRouter), then Ollama's /api/show (and /api/ps, after loading the model
    when only a loaded model tells its context), then llama.cpp's /props,
    through the client's own connections. An endpoint that cannot be reached stops the asking at once.
    """
    base = str(client.base_url).rstrip("/")
    host = urlsplit(base).hostname or ""
    if host.endswith(SILENT_HOSTS):
        return None
    root = base.removesuffix("/v1")
    try:
        found = listed_window(await _ask(client, "get", "/models"), model)
        if found is None and (show := await _ask(client, "post", f"{root}/api/show", {"model": model})) is not None:
            found = ollama_window(show, await _ollama_running(client, root, model, show))
        if found is None:
            found = llama_cpp_window(await _ask(client, "get", f"{root}/props"))
    except (openai.APIConnectionError, openai.APITimeoutError):
        return None
    if found is not None:
        log.info("judge model %s: context window %d tokens (%s)", model, found.tokens, found.source)
    return found


async def _ollama_running(client: AsyncOpenAI, root: str, model: str, show: Any) -> int | None:
    """The context Ollama runs `model` with, from /api/ps; when the model names no num_ctx and is not loaded, it is
    loaded first (as the first judge request would), since the server's default (OLLAMA_CONTEXT_LENGTH, or a size
    chosen by VRAM) shows nowhere else."""
    running = _running_context(await _ask(client, "get", f"{root}/api/ps"), model)
    parameters = show.get("parameters") if isinstance(show, dict) else None
    if running is not None or (isinstance(parameters, str) and _NUM_CTX.search(parameters)):
        return running
    # An empty prompt only loads the model; loading may take as long as a judge request.
    if await _ask(client, "post", f"{root}/api/generate", {"model": model}, timeout=client.timeout) is None:
        return None
    return _running_context(await _ask(client, "get", f"{root}/api/ps"), model)


def _running_context(ps: Any, model: str) -> int | None:
    """The context_length /api/ps reports for `model` while it is loaded (Ollama 0.12 and later), else None."""
    entries = ps.get("models") if isinstance(ps, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and model in (entry.get("name"), entry.get("model")):
            length = entry.get("context_length")
            return length if isinstance(length, int) and length > 0 else None
    return None


async def _ask(client: AsyncOpenAI, method: str, path: str, body: dict[str, Any] | None = None, *,
               timeout: float | openai.Timeout | None = None) -> Any:
    """The JSON an endpoint answers to one discovery request (within DISCOVERY_TIMEOUT, unless `timeout` says
    otherwise); None for an error status or a body that is not JSON.

    A connection that fails raises, so that an endpoint that cannot be reached is not asked three times. A host that
    does not take the connection is given the client's own connect timeout, not DISCOVERY_TIMEOUT."""
    if timeout is None:
        connect = client.timeout.connect if isinstance(client.timeout, openai.Timeout) else None
        timeout = openai.Timeout(DISCOVERY_TIMEOUT, connect=min(DISCOVERY_TIMEOUT, connect or DISCOVERY_TIMEOUT))
    try:
        if method == "post":
            return await client.post(path, cast_to=object, body=body, options={"timeout": timeout, "max_retries": 0})
        return await client.get(path, cast_to=object, options={"timeout": timeout, "max_retries": 0})
    except (openai.APIConnectionError, openai.APITimeoutError):
        raise
    except (openai.APIError, ValueError) as err:  # a 404, a 405, a page that is not JSON
        log.debug("context discovery %s %s: %s", method.upper(), path, err)
        return None
