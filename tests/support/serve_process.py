"""`judgebot serve` as a process of its own: a free port, the environment it runs with, and waiting until it is healthy."""

from __future__ import annotations

import asyncio
import os
import socket

import aiohttp

from bot.config import Settings
from tests.support.slack_side import SIGNING_SECRET


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_env(bot_settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "JUDGE"))}
    return {**env, "SLACK_BOT_TOKEN": bot_settings.slack_bot_token.get_secret_value(),
            "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": bot_settings.slack_api_url,
            "OPENAI_BASE_URL": bot_settings.openai_base_url, "JUDGE_MODEL": "judge-test",
            "JUDGEBOT_DB": str(bot_settings.judgebot_db), **extra}


async def wait_healthy(url: str) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(400):
            try:
                async with session.get(f"{url}/health") as health:
                    if health.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise AssertionError(f"{url} never became healthy")
