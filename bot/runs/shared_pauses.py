"""The judge endpoints' pauses told between the processes on one database: a 429 one of them gets holds the others'
requests to that endpoint and model too, so that N replicas do not ask a refusing provider N times as often."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

from bot.llm.limiters import LIMITERS, Limiters
from bot.store import Store, current_pauses, process_name, tell_pause

log = logging.getLogger(__name__)

SHARE_EVERY = 1.0  # seconds between two looks at the pauses: a 429's wait is rarely shorter


class SharedPauses:
    """Tells the pauses this process's limiters learned, and holds them to the pauses the other processes told."""

    def __init__(self, store: Store, limiters: Limiters = LIMITERS) -> None:
        self.store, self.limiters = store, limiters

    async def forever(self) -> None:
        """Share every SHARE_EVERY seconds until cancelled (a failed look is logged; the next may go through)."""
        while True:
            try:
                await asyncio.to_thread(self.share)
            except Exception:
                log.warning("could not share the judge endpoints' pauses", exc_info=True)
            await asyncio.sleep(SHARE_EVERY)

    def share(self) -> None:
        """Tell this process's new pauses; take the others' (a pause this process told is not taken back)."""
        made = self.limiters.made()
        for endpoint, model, limiter in made:
            if limiter.told is not None:
                wall, kind = limiter.told
                limiter.told = None
                tell_pause(self.store, endpoint=endpoint, model=model, kind=kind,
                           until=datetime.fromtimestamp(wall, UTC).replace(tzinfo=None))
        if not made:
            return
        mine = process_name()
        for pause in current_pauses(self.store):
            if pause.told_by == mine:
                continue
            for endpoint, model, limiter in made:
                if (endpoint, model) == (pause.endpoint, pause.model):
                    limiter.hold_until(pause.until.replace(tzinfo=UTC).timestamp(), pause.kind)
