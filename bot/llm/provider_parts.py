"""The parts of a provider's window on its own clock (the seconds of its minute), once its headers say it holds each
part to a share: where a part ends, what others spent in one, and how long a request waits to arrive inside one with
room, spread across it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

# A part's share is spread across it: the k-th unit of its share goes no earlier than its start + GUARD + k / share
# of the rest (so requests that came late catch up within the part, and a part's share taken at once does not leave
# the rest of it idle while the requests in flight come back), and a request goes no nearer than GUARD of a part to
# either end of one (it may arrive in the next).
GUARD = 0.02


@dataclass
class ProviderParts:
    """The provider's parts of `part` seconds: a time one ends at (the latest estimate; None while not known), and
    what others spent of each limit in a part (its number, the spend)."""

    part: float
    end: float | None = None
    others: dict[str, tuple[int, float]] = field(default_factory=dict)

    def followed(self, kind: str) -> bool:
        """Whether requests of `kind` follow the provider's parts (its headers have said it counts them)."""
        return self.end is not None and kind in self.others

    def follow(self, reset: float, sent: float) -> None:
        """A reply to a request sent at `sent` says the provider's part ends `reset` s after it arrived: the parts'
        ends, the latest of the estimates (each is early by the time its request took to arrive)."""
        end = sent + max(reset, 0.0)
        if self.end is None:
            self.end = end
            return
        later = (end - self.end + self.part / 2) % self.part - self.part / 2  # against the nearest end known
        if later > 0:
            self.end += later

    def spent_by_others(self, kind: str, now: float, spend: float) -> None:
        """What others spent of `kind` in the part `now` is in (after `follow`)."""
        assert self.end is not None
        self.others[kind] = (int((now - self.end) // self.part), max(spend, 0.0))

    def wait(self, now: float, kind: str, need: float, cap: float, held_since: Sequence[list[float]], column: int) -> float:
        """How long a request needing `need` of `kind` waits for room in the part it would arrive in (`cap` its share;
        `held_since`, the requests sent, in time order, `column` the spend of `kind` in each): 0 when it goes now."""
        assert self.end is not None
        guard = self.part * GUARD
        number, into = divmod(now - self.end, self.part)
        if into < guard:  # just after a part began: it might still arrive in the one before
            return guard - into
        start = self.end + number * self.part
        if into > self.part - guard:  # just before a part ends: it goes once the next has begun
            return start + self.part + guard - now
        held = 0.0  # what went in this part
        for entry in reversed(held_since):
            if entry[0] < start:
                break
            held += entry[column]
        others_part, others = self.others[kind]
        held += others if others_part == int(number) else 0.0
        if held > 0 and held + need > cap:  # one larger than the share goes into an empty part
            return start + self.part + guard - now
        # Spread across the part: what it holds so far goes no earlier than its share of the part's time
        return max(start + guard + min(held / cap, 1.0) * (self.part - 2 * guard) - now, 0.0) if cap > 0 else 0.0
