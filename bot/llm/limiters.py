"""The process's rate limiters, one per judge endpoint and model, and what each run learns of them: the requests and
tokens it sent, the waits, and the limit that paced it."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.llm.rate_limits import KINDS, WINDOW, RateLimiter


@dataclass(eq=False)  # each run's own: told apart by identity, however alike their figures
class Usage:
    """What the limiter saw of a run: requests and tokens sent, and the seconds requests waited for each limit."""

    requests: int = 0
    tokens: float = 0.0
    waited: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    peak: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))  # the most in one window

    @property
    def binding(self) -> str | None:
        """The limit requests waited for most (requests or tokens), or None when none made them wait."""
        kind = max(KINDS, key=lambda name: self.waited[name])
        return kind if self.waited[kind] > 0 else None


class Limiters:
    """The limiters of a process, one per endpoint and model, made when first asked for."""

    def __init__(self) -> None:
        self._set: tuple[int | None, int | None, float] = (None, None, WINDOW)
        self._made: dict[tuple[str, str], RateLimiter] = {}

    def configure(self, *, requests: int | None, tokens: int | None, window: float = WINDOW) -> None:
        """The limits JUDGE_RPM and JUDGE_TPM set for every endpoint and model (None: learned from the replies), over
        JUDGE_RATE_WINDOW seconds."""
        if (requests, tokens, window) != self._set:
            self._set = (requests, tokens, window)
            self._made.clear()  # limiters made before follow the settings from now on

    def of(self, endpoint: str, model: str) -> RateLimiter:
        """The limiter of `model` at `endpoint`."""
        key = (endpoint, model)
        if key not in self._made:
            requests, tokens, window = self._set
            self._made[key] = RateLimiter(requests=requests, tokens=tokens, window=window)
        return self._made[key]

    def made(self) -> list[tuple[str, str, RateLimiter]]:
        """Every limiter made so far: its endpoint, its model, and itself."""
        return [(endpoint, model, limiter) for (endpoint, model), limiter in self._made.items()]

    def clear(self) -> None:
        """Forget every limiter: what each learned and what was sent (a process that starts over)."""
        self._made.clear()


LIMITERS = Limiters()  # the process's: every judge client of an endpoint and model paces by the same one


def paced_text(usage: Usage, limiter: RateLimiter) -> str | None:
    """Which limit bound a run: "paced by the tokens limit: 398,000 of 400,000 a minute"; None when none did."""
    kind = usage.binding
    if kind is None or limiter.limits[kind] is None:
        return None
    per = "a minute" if limiter.window == WINDOW else f"per {limiter.window:g} s"
    return f"paced by the {kind} limit: up to {usage.peak[kind]:,.0f} of {limiter.limits[kind]:,.0f} {per}"
