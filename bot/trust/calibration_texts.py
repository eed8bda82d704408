"""How calibration's figures read, in words shared by the terminal, Slack and the digest (plain text: each place makes
it safe to show)."""

from __future__ import annotations

from bot.figures import percent, plural
from bot.trust.calibration import Agreement, Calibration, Gap
from bot.trust.stats.kappa import few_cases, noted
from bot.trust.stats.mcnemar import p_text

__all__ = ["agreement_text", "alpha_text", "few_cases", "gap_text", "interval_method", "labels_text", "noted",
           "over_labels", "pass_rates_text", "share_text", "tag_agreement_text"]


def interval_method(clustered: bool) -> str:
    """How an agreement interval was reached: "Wilson", or a score interval over cases where several people labeled
    some case."""
    return "score interval over cases" if clustered else "Wilson"


def counted_text(figures: Agreement) -> str:
    """What an agreement counts: "6/8" (labels alike of labels, a case each), or "54 labels of 40 cases, each case
    weighing one"."""
    if not figures.clustered:
        return f"{figures.pass_agree}/{figures.pass_n}"
    return f"{figures.pass_n} labels of {figures.pass_cases} cases, each case weighing one"


def agreement_text(figures: Agreement, *, note: bool = True) -> str:
    """Agreement on pass/fail with its 95 % interval and how it was reached, such as "82% (41/50), 95% CI 69%-90%
    (Wilson)"; or why there is none. With `note`, "few labeled cases (n = 12)" when they are few."""
    if figures.agreement is None:
        return "n/a (no label says pass or fail)"
    text = share_text(figures.agreement, counted_text(figures), figures.interval, figures.clustered)
    return noted(text, figures.pass_cases) if note else text


def tag_agreement_text(figures: Calibration, *, note: bool = True) -> str:
    """How often the judge's tag is people's, as `agreement_text` says it of pass/fail: "60% (18/30), 95% CI
    42%-75% (Wilson)"."""
    kappa = figures.kappa_tag
    if figures.tag_agreement is None:
        return "n/a (no label gives a tag)"
    counted = (f"{kappa.n} labels of {kappa.cases} cases, each case weighing one" if kappa.clustered else
               f"{figures.tag_agree}/{kappa.n}")
    text = share_text(figures.tag_agreement, counted, figures.tag_interval, kappa.clustered)
    return noted(text, kappa.cases) if note else text


def share_text(share: float, counted: str, interval: tuple[float, float] | None, clustered: bool) -> str:
    """A share with what it counts and its interval: "82% (41/50), 95% CI 69%-90% (Wilson)"."""
    text = f"{percent(share)} ({counted})"
    if interval is not None:
        text += f", 95% CI {percent(interval[0])}-{percent(interval[1])} ({interval_method(clustered)})"
    return text


def pass_rates_text(figures: Agreement, *, note: bool = True) -> str:
    """Both sides' pass rates and McNemar's exact test of their difference over cases: "the judge passes 100%, people
    30%, McNemar p < 0.001"; where several people labeled some case, each side's majority decides it, and even
    splits are said to be left out. With `note`, "few labeled cases (n = 12)" when they are few."""
    if figures.judge_pass_rate is None or figures.human_pass_rate is None or figures.mcnemar_p is None:
        return "n/a (no label says pass or fail)"
    split = f"; {figures.split} split evenly, left out" if figures.split else ""
    over = f" (over cases, by people's majority{split})" if figures.clustered else ""
    text = (f"the judge passes {percent(figures.judge_pass_rate)}, people {percent(figures.human_pass_rate)}, "
            f"McNemar {p_text(figures.mcnemar_p)}{over}")
    return noted(text, figures.pass_cases) if note else text


def gap_text(gap: Gap) -> str:
    """How the judge's scores on a criterion differ from people's: "the judge scores 0.25 higher, mean absolute
    difference 0.50 (8 labels)", with the weighted kappa of an ordinal scale."""
    signed = round(gap.mean_signed, 2)
    way = ("scores the same on average" if signed == 0 else
           f"scores {abs(signed):.2f} {'higher' if signed > 0 else 'lower'}")
    counted = f"{gap.n} {plural(gap.n, 'label')}" + (f" of {gap.cases} cases" if gap.cases != gap.n else "")
    text = f"the judge {way}, mean absolute difference {gap.mean_abs:.2f} ({counted})"
    if gap.kappa is not None:
        text += f"; weighted kappa {gap.kappa.text()}"
    return noted(text, gap.cases) if gap.kappa is None else text  # a kappa's text says it itself


def alpha_text(alpha: float | None, units: int) -> str:
    """Krippendorff's alpha over `units` rows: "0.55 (45 rows)", or why there is none."""
    if units == 0:
        return "n/a (no row judged twice)"
    if alpha is None:
        return f"n/a (every judgment the same, {units} rows)"
    return f"{round(alpha, 2) + 0.0:.2f} ({units} rows)"


def labels_text(figures: Agreement) -> str:
    """The pass/fail figures of some labels on one line, for the digest: agreement, pass rates, kappa and n (a
    single "few labeled cases (n = 12)" for them all when they are few)."""
    if not figures.n:
        return "no labels"
    kappa = figures.kappa_pass.text(note=False)
    size = few_cases(figures.pass_cases) or f"n {figures.pass_cases} cases"
    return (f"agreement {agreement_text(figures, note=False)} · {pass_rates_text(figures, note=False)} · "
            f"kappa {kappa} · {size}")


def over_labels(text: str, n: int, cases: int) -> str:
    """A figure's text "over 12 labels" (of so many cases when they are fewer), with "few labeled cases (n = 12)"
    when the cases are few."""
    of = f" of {cases} cases" if cases != n else ""
    return noted(f"{text} over {n} {plural(n, 'label')}{of}", cases)
