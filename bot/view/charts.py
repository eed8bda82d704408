"""Charts drawn on the server as SVG geometry: lines of 0-100 values over weeks, with marked weeks; numbers only
here, the template writes the markup (every name in it escaped)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 40, 16, 14, 34  # margins: the axis labels live there


@dataclass(frozen=True)
class Line:
    """One series: its name, CSS class, the polyline's segments (a gap where a week has no value) and its dots."""

    name: str
    css: str
    segments: list[str]
    dots: list[tuple[float, float, str]]  # (x, y, the value as text)


@dataclass(frozen=True)
class Chart:
    """A chart of weeks: its size, the lines, the x labels, the y grid and the weeks marked."""

    width: int
    height: int
    lines: list[Line]
    ticks: list[tuple[float, str]]  # (x, week)
    grid: list[tuple[float, str]]  # (y, value)
    marks: list[tuple[float, str]]  # (x, why)
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM


def _x(index: int, count: int) -> float:
    span = WIDTH - LEFT - RIGHT
    return LEFT + (span * index / (count - 1) if count > 1 else span / 2)


def _y(value: float) -> float:
    return TOP + (HEIGHT - TOP - BOTTOM) * (1 - max(0.0, min(value, 100.0)) / 100)


def weekly_chart(weeks: Sequence[str], series: Sequence[tuple[str, str, Sequence[float | None]]],
                 marks: Sequence[tuple[int, str]]) -> Chart:
    """A chart of 0-100 `series` ((name, css class, a value or None per week)) over `weeks`, with `marks` ((week
    index, why)) drawn as vertical lines."""
    count = len(weeks)
    lines = []
    for name, css, values in series:
        segments: list[str] = []
        current: list[str] = []
        dots: list[tuple[float, float, str]] = []
        for index, value in enumerate(values):
            if value is None:
                if current:
                    segments.append(" ".join(current))
                current = []
                continue
            x, y = _x(index, count), _y(value)
            current.append(f"{x:.1f},{y:.1f}")
            dots.append((round(x, 1), round(y, 1), f"{value:.0f}"))
        if current:
            segments.append(" ".join(current))
        lines.append(Line(name, css, segments, dots))
    step = max(1, count // 8)  # at most about 8 week labels
    ticks = [(round(_x(index, count), 1), week[-3:]) for index, week in enumerate(weeks) if index % step == 0]
    grid = [(round(_y(value), 1), str(value)) for value in (0, 25, 50, 75, 100)]
    return Chart(WIDTH, HEIGHT, lines, ticks, grid, [(round(_x(index, count), 1), why) for index, why in marks])
