"""Chart images for chat: drawn with matplotlib's Agg backend into PNG bytes, sized to be read on a phone."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

WIDTH_INCHES, DPI = 8.0, 150  # 1,200 pixels wide: sharp on a phone, small to upload
MODELS_SHOWN = 12
BAND_COLOURS = ("#c0392b", "#e67e22", "#f1c40f", "#7dcea0", "#1e8449")  # worst to best
ERROR_COLOUR = "#95a5a6"


def _short(name: str, room: int = 22) -> str:
    return _literal(name if len(name) <= room else name[: room - 1] + "…")


def _literal(text: str) -> str:
    """`text` drawn as it is: a pair of $ would make matplotlib render (or fail on) TeX mathematics."""
    return text.replace("$", r"\$")


def _png(figure: Figure) -> bytes:
    """The figure as PNG bytes, drawn once: savefig draws a figure with a layout engine twice (to lay it out, then to
    render it), and one draw lays it out as well."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.image import imsave

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    buffer = io.BytesIO()
    imsave(buffer, canvas.buffer_rgba(), format="png", dpi=DPI)
    return buffer.getvalue()


def score_distribution_png(title: str, bands: Sequence[str], models: Mapping[str, tuple[Sequence[int], int]]) -> bytes:
    """A bar per model under test: the share of its rows in each score band, judge errors last, as a PNG.

    `models` maps a model's name to (rows per band, judge errors); the models with most rows are shown.
    """
    from matplotlib.figure import Figure  # imported here: it takes a while, and only chart makers need it

    shown = sorted(models.items(), key=lambda item: -(sum(item[1][0]) + item[1][1]))[:MODELS_SHOWN]
    shown.reverse()  # barh draws from the bottom: the biggest model comes out on top
    figure = Figure(figsize=(WIDTH_INCHES, 1.9 + 0.62 * max(len(shown), 1)), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    labels = [*bands, "judge error"]
    colours = [*BAND_COLOURS[: len(bands)], ERROR_COLOUR]
    names = [f"{_short(name)} ({sum(counts) + errors:,})" for name, (counts, errors) in shown]
    left = [0.0] * len(shown)
    for index, (label, colour) in enumerate(zip(labels, colours)):
        counts = [(list(counts) + [errors])[index] for _, (counts, errors) in shown]
        totals = [max(sum(counts_) + errors, 1) for _, (counts_, errors) in shown]
        shares = [100 * count / total for count, total in zip(counts, totals)]
        bars = axes.barh(names, shares, left=left, color=colour, label=label, height=0.62, edgecolor="white")
        for bar, share, count in zip(bars, shares, counts):
            if share >= 9:  # a count fits inside a segment this wide
                axes.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2, str(count),
                          ha="center", va="center", fontsize=11, color="black" if index in (2, 3) else "white")
        left = [start + share for start, share in zip(left, shares)]
    axes.set_xlim(0, 100)
    axes.set_xlabel("share of rows (%) · headline score bands", fontsize=12)
    axes.tick_params(axis="y", labelsize=13)
    axes.tick_params(axis="x", labelsize=11)
    axes.spines[["top", "right"]].set_visible(False)
    axes.set_title(_literal(title), fontsize=14, loc="left")
    figure.legend(loc="outside lower center", ncols=len(labels), fontsize=10, frameon=False)
    return _png(figure)


TREND_HEIGHT_INCHES = 4.5  # with the width: 1,200 x 675 pixels
TREND_SERIES_SHOWN = 8


def trend_png(title: str, weeks: Sequence[str], series: Mapping[str, Sequence[float | None]],
              marks: Sequence[tuple[int, str]] = ()) -> bytes:
    """A line per series (a model under test on a rubric): mean headline in each week, gaps where none, as a PNG;
    each of `marks` (a week's index, what happened) a dashed vertical line with its words, such as the week the
    channel's judge changed.

    The series with most weeks of data come first; at most TREND_SERIES_SHOWN are drawn.
    """
    from matplotlib.figure import Figure  # imported here: it takes a while, and only chart makers need it

    shown = sorted(series.items(), key=lambda item: (-sum(v is not None for v in item[1]), item[0]))
    figure = Figure(figsize=(WIDTH_INCHES, TREND_HEIGHT_INCHES), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    positions = list(range(len(weeks)))
    for name, values in shown[:TREND_SERIES_SHOWN]:
        points = [(x, y) for x, y in zip(positions, values) if y is not None]
        # a line between weeks with data; a week without judgments leaves a gap, not a fall to zero
        ys = [float("nan") if value is None else value for value in values]
        line, = axes.plot(positions, ys, marker="o", linewidth=2, label=_short(name, 30))
        if points:
            axes.annotate(f"{points[-1][1]:.0f}", points[-1], textcoords="offset points", xytext=(6, 0),
                          va="center", fontsize=10, color=line.get_color())
    for index, words in marks:
        axes.axvline(index, color="0.4", linestyle="--", linewidth=1)
        axes.annotate(_short(words, 40), (index, 102), textcoords="offset points", xytext=(4, 0), fontsize=9,
                      color="0.3", va="top")
    axes.set_xticks(positions, [str(week) for week in weeks], fontsize=10)
    axes.set_ylim(0, 105)
    axes.set_ylabel("mean headline (0-100)", fontsize=12)
    axes.grid(axis="y", alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    axes.set_title(title, fontsize=14, loc="left")
    if shown:
        figure.legend(loc="outside lower center", ncols=min(len(shown), 4), fontsize=10, frameon=False)
    return _png(figure)


def differences_png(title: str, differences: Sequence[float]) -> bytes:
    """How B's headline moved against A's, question by question: a histogram of the paired differences (-100 to
    100), with zero marked."""
    from matplotlib.figure import Figure  # imported here: it takes a while, and only chart makers need it

    figure = Figure(figsize=(WIDTH_INCHES, TREND_HEIGHT_INCHES), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    axes.hist(list(differences), bins=[edge * 10 - 100 for edge in range(21)], color="#1d3c5a", rwidth=0.9)
    axes.axvline(0, color="0.4", linestyle="--", linewidth=1)
    axes.set_xlim(-100, 100)
    axes.set_xlabel("B's headline less A's, per question", fontsize=12)
    axes.set_ylabel("questions", fontsize=12)
    axes.spines[["top", "right"]].set_visible(False)
    axes.set_title(_literal(title), fontsize=14, loc="left")
    return _png(figure)


WIN_COLOURS = ("#1e8449", "#bdc3c7", "#c0392b")  # B won, tied, A won


def win_rates_png(title: str, matchups: Sequence[tuple[str, str, int, int, int]]) -> bytes:
    """A bar per two models compared pairwise: the share of pairs B won, tied (inconsistent pairs among them) and
    lost, with even odds marked. `matchups` holds (A, B, B's wins, ties, B's losses) each."""
    from matplotlib.figure import Figure  # imported here: it takes a while, and only chart makers need it

    shown = list(matchups[:MODELS_SHOWN])
    shown.reverse()  # barh draws from the bottom: the first comes out on top
    figure = Figure(figsize=(WIDTH_INCHES, 1.9 + 0.62 * max(len(shown), 1)), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    names = [f"{_short(b, 18)} vs {_short(a, 18)} ({wins + ties + losses:,})" for a, b, wins, ties, losses in shown]
    left = [0.0] * len(shown)
    for index, (label, colour) in enumerate(zip(("B won", "tie", "A won"), WIN_COLOURS)):
        counts = [(wins, ties, losses)[index] for _, _, wins, ties, losses in shown]
        shares = [100 * count / max(row[2] + row[3] + row[4], 1) for count, row in zip(counts, shown)]
        bars = axes.barh(names, shares, left=left, color=colour, label=label, height=0.62, edgecolor="white")
        for bar, share, count in zip(bars, shares, counts):
            if share >= 9:
                axes.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2, str(count),
                          ha="center", va="center", fontsize=11, color="black" if index == 1 else "white")
        left = [start + share for start, share in zip(left, shares)]
    axes.axvline(50, color="0.3", linestyle="--", linewidth=1)
    axes.set_xlim(0, 100)
    axes.set_xlabel("share of pairs (%) · B against A, each pair judged in both orders", fontsize=12)
    axes.tick_params(axis="y", labelsize=12)
    axes.spines[["top", "right"]].set_visible(False)
    axes.set_title(_literal(title), fontsize=14, loc="left")
    figure.legend(loc="outside lower center", ncols=3, fontsize=10, frameon=False)
    return _png(figure)
