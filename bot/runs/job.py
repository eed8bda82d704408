"""One run being judged, as the live and the batch engines both see it: where it is kept, its rubric and judges, the
keys its verdicts and samples are saved and looked up under, and the verdicts made without asking a judge."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.judge.content_free import content_free, screened
from bot.judge.injection_screen import screen
from bot.judge.panel import Panel
from bot.judge.prompt import cache_key, sample_key
from bot.judge.samples import UNSURE_SPREAD
from bot.llm.client import JudgeClient
from bot.records import Triple, Verdict
from bot.rubric import Rubric
from bot.store import Run, Store

KEYS_KEPT = 10_000  # rows whose keys the estimate hands on to the judging (about 2 MB): a run of any size holds no more


@dataclass
class RowKeys:
    """The keys the estimate worked out for a run's pending rows, by row id, for the judging that follows in the same
    request to take rather than work out again (the first KEYS_KEPT rows; the others' are worked out again)."""

    kept: dict[int, str] = field(default_factory=dict)

    def keep(self, judgment_id: int, key: str) -> None:
        """Hand on one row's key, while there is room."""
        if len(self.kept) < KEYS_KEPT:
            self.kept[judgment_id] = key

    def take(self, judgment_id: int) -> str | None:
        """The key handed on for a row, once; None when there is none."""
        return self.kept.pop(judgment_id, None)


def judge_identity(client: JudgeClient) -> str:
    """What a verdict may be reused by: the judge model and the endpoint that serves it (never a key)."""
    return f"{client.model}\x1f{client.endpoint}"


@dataclass
class RunJob:
    """A run, its rubric and the panel that judges it, and how its verdicts are made and kept."""

    store: Store
    run: Run
    rubric: Rubric
    panel: Panel
    unsure_spread: float = UNSURE_SPREAD
    keys: RowKeys = field(default_factory=RowKeys)  # from the estimate of the same request, when it made one
    temperature: float | None = field(init=False)  # as asked: a judge that refuses it still keys its samples by it

    def __post_init__(self) -> None:
        self.temperature = self.panel.temperature

    @property
    def single(self) -> bool:
        """One judge asked once per row: the row's verdict is its one reply, no samples kept apart."""
        return self.panel.single

    @property
    def judge_model(self) -> str:
        """The judge or jury a row's verdict is recorded under."""
        return self.panel.name

    @property
    def scope(self) -> int | None:
        """Where cached verdicts and samples may come from: a fresh run reuses only its own."""
        return self.run.id if self.run.fresh else None

    def client(self, judge_index: int = 0) -> JudgeClient:
        """The judge at `judge_index` of the panel."""
        return self.panel.clients[judge_index]

    def row_key(self, triple: Triple) -> str:
        """The key a row's verdict is saved and looked up under: its judge's, or for several judgments the panel's
        (its judges, samples and temperature). A judge is its model at its endpoint: the same model name served
        elsewhere is another judge, whose verdicts are never reused for this one."""
        if self.single:
            return cache_key(self.rubric, judge_identity(self.client()), triple)
        judges = "\x1f".join(judge_identity(client) for client in self.panel.clients)
        return cache_key(self.rubric, f"{judges}\x1f{self.panel.samples} at {self.panel.temperature}", triple)

    def key_of(self, judgment_id: int, triple: Triple) -> str:
        """A pending row's key (`row_key`): the one the estimate handed on, else worked out now."""
        return self.keys.take(judgment_id) or self.row_key(triple)

    def sample_key(self, triple: Triple, client: JudgeClient, number: int) -> str:
        """The key one sample of the judge `client` is saved and looked up under."""
        return sample_key(self.rubric, judge_identity(client), triple, number, self.temperature)

    def screened(self, triple: Triple) -> Verdict | None:
        """The verdict of a row never sent to a judge, under the panel's name: an answer with nothing to grade that
        its rubric fails (bot.judge.content_free); None for a row to judge. Looked at before any cache, so a verdict
        a judge once gave such an answer is never reused."""
        if self.rubric.content_free != "fail" or not content_free(triple):  # the usual row: no screen run for it
            return None
        return screened(self.rubric, self.judge_model, triple, screen(self.rubric, triple))
