"""Who judges for a command: the configured judge, the jury that --judges, --judges-file, JUDGES_FILE or JUDGES name,
or the judges a run was started with; each with the endpoint it needs, or a sentence saying how to set one."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.judge.panel import JudgeSpec, Panel
    from bot.llm.client import JudgeClient
    from bot.rubric import Rubric
    from bot.store import Run

NO_ENDPOINT = (
    "judgebot needs a judge to talk to. Set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL to use any "
    "OpenAI-compatible server (for a local one: OPENAI_BASE_URL=http://localhost:11434/v1 for Ollama, "
    "http://localhost:8000/v1 for vLLM or llama.cpp; add OPENAI_API_KEY if it asks for one). Pick the model "
    "with JUDGE_MODEL. Put them in the environment or in a .env file in this directory."
)


def judge_client(settings: Settings, concurrency: int | None = None, model: str | None = None) -> JudgeClient:
    """The judge client the settings describe; UsageError when they name no endpoint."""
    from bot.llm.configured import judge_client_from

    if not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    return judge_client_from(settings, model=model, concurrency=concurrency)


def judge_panel(settings: Settings, args: argparse.Namespace, rubric: Rubric, concurrency: int | None = None) -> Panel:
    """The judges a `judge` command asks: --judges-file, --judges, JUDGES_FILE or JUDGES (else the configured judge),
    each --samples times (else the rubric's own number)."""
    from bot.judge.panel import open_panel

    specs = judge_specs(settings, args)
    if (specs is None or any(spec.base_url is None for spec in specs)) and not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    samples = args.samples if args.samples is not None else rubric.samples
    return open_panel(settings, specs=specs, samples=samples, concurrency=concurrency)


def judge_specs(settings: Settings, args: argparse.Namespace) -> list[JudgeSpec] | None:
    """The jury --judges-file, --judges, JUDGES_FILE or JUDGES names; None for the configured judge alone."""
    from bot.judge.panel import configured_jury, judges_from_names, read_judges

    if args.judges and args.judges_file:
        raise UsageError("give --judges (models on the configured endpoint) or --judges-file, not both")
    if args.judges_file:
        return read_judges(args.judges_file)
    if args.judges:
        return judges_from_names(args.judges)
    return configured_jury(settings)


def run_panel(settings: Settings, run: Run, concurrency: int | None = None) -> Panel:
    """The judges a run was started with, asked the same way again."""
    from bot.judge.panel import reopen_panel

    if not run.judges and not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    return reopen_panel(settings, judge_model=run.judge_model, samples=run.samples, judges=run.judges,
                        temperature=run.temperature, concurrency=concurrency)
