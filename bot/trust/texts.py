"""How calibration's figures read, in words shared by the terminal, Slack and the digest (plain text: each place makes
it safe to show)."""

from __future__ import annotations

from bot.figures import percent, plural
from bot.trust.calibration import Agreement, Gap
from bot.trust.kappa import few_labels, noted
from bot.trust.mcnemar import p_text

__all__ = ["agreement_text", "alpha_text", "few_labels", "gap_text", "interval_method", "labels_text", "noted",
           "over_labels", "pass_rates_text"]


def interval_method(cases: int | None) -> str:
    """How an agreement interval was reached: "Wilson", or "bootstrap over 40 cases" where several people labeled
    some case."""
    return "Wilson" if cases is None else f"bootstrap over {cases} cases"


def agreement_text(figures: Agreement, *, note: bool = True) -> str:
    """Agreement on pass/fail with its 95 % interval and how it was reached, such as "82% (41/50), 95% CI 69%-90%
    (Wilson)"; or why there is none. With `note`, "few labels (n = 12)" when they are few."""
    if figures.agreement is None:
        return "n/a (no label says pass or fail)"
    text = f"{percent(figures.agreement)} ({figures.pass_agree}/{figures.pass_n})"
    if figures.interval is not None:
        low, high = figures.interval
        text += f", 95% CI {percent(low)}-{percent(high)} ({interval_method(figures.cases)})"
    return noted(text, figures.pass_n) if note else text


def pass_rates_text(figures: Agreement, *, note: bool = True) -> str:
    """Both sides' pass rates and McNemar's test of their difference: "the judge passes 100%, people 30%, McNemar p <
    0.001"; with `note`, "few labels (n = 12)" when they are few."""
    if figures.judge_pass_rate is None or figures.human_pass_rate is None or figures.mcnemar_p is None:
        return "n/a (no label says pass or fail)"
    clustered = " (clustered by case)" if figures.cases is not None else ""
    text = (f"the judge passes {percent(figures.judge_pass_rate)}, people {percent(figures.human_pass_rate)}, "
            f"McNemar {p_text(figures.mcnemar_p)}{clustered}")
    return noted(text, figures.pass_n) if note else text


def gap_text(gap: Gap) -> str:
    """How the judge's scores on a criterion differ from people's: "the judge scores 0.25 higher, mean absolute
    difference 0.50 (8 labels)", with the weighted kappa of an ordinal scale."""
    signed = round(gap.mean_signed, 2)
    way = ("scores the same on average" if signed == 0 else
           f"scores {abs(signed):.2f} {'higher' if signed > 0 else 'lower'}")
    text = f"the judge {way}, mean absolute difference {gap.mean_abs:.2f} ({gap.n} {plural(gap.n, 'label')})"
    if gap.kappa is not None:
        text += f"; weighted kappa {gap.kappa.text()}"
    return noted(text, gap.n) if gap.kappa is None else text  # a kappa's text says it itself


def alpha_text(alpha: float | None, units: int) -> str:
    """Krippendorff's alpha over `units` rows: "0.55 (45 rows)", or why there is none."""
    if units == 0:
        return "n/a (no row judged twice)"
    if alpha is None:
        return f"n/a (every judgment the same, {units} rows)"
    return f"{round(alpha, 2) + 0.0:.2f} ({units} rows)"


def labels_text(figures: Agreement) -> str:
    """The pass/fail figures of some labels on one line, for the digest: agreement, pass rates, kappa and n (a
    single "few labels (n = 12)" for them all when they are few)."""
    if not figures.n:
        return "no labels"
    kappa = figures.kappa_pass.text(note=False)
    size = few_labels(figures.pass_n) or f"n {figures.n}"
    return (f"agreement {agreement_text(figures, note=False)} · {pass_rates_text(figures, note=False)} · "
            f"kappa {kappa} · {size}")


def over_labels(text: str, n: int) -> str:
    """A figure's text "over 12 labels", with "few labels (n = 12)" when they are few."""
    return noted(f"{text} over {n} {plural(n, 'label')}", n)
