"""Pictures for the viewer: a lab's trend as inline SVG, drawn on the server, no script.

A lab with two or more numeric results gets a line chart: the points in date order, each
a link to the result's fact (its value and sources), the reference range shaded when the
latest result that has one gives a low and a high. The SVG carries a `<title>` and a
`<desc>`; the page's results table below it is the text alternative. Every label is
escaped (patient records are untrusted text).

`/timeline.md` gets a strip of the same "At a glance" counts the markdown ends with: one
lane each for encounters, condition onsets and sessions, one column per year, a dot sized
by the count (with the count as its title); the markdown table is the text alternative.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from markupsafe import Markup, escape

from engine.models import Fact
from vfs.graph import PatientGraph, fact_date
from vfs.render_timeline import LANES, glance
from vfs.values import day, number, show

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 40
Scale = Callable[[float], float]
_RANGE = re.compile(r"(-?\d+(?:\.\d+)?)[^\d-]*?(?:-|–|to)\s*(-?\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Point:
    """One result: its day, its value and the URL of its fact."""

    day: str
    value: float
    url: str


def reference_range(facts: list[Fact]) -> tuple[float, float] | None:
    """(low, high) of the latest result whose reference range names both, if any."""
    for fact in facts:
        found = _RANGE.search(show(fact.fields.get("reference_range")) or "")
        if found:
            low, high = float(found.group(1)), float(found.group(2))
            if low < high:
                return low, high
    return None


def _points(pid: str, facts: list[Fact]) -> list[Point]:
    base = f"/v1/patients/{quote(pid, safe='')}/facts/"
    points = [
        Point(when, float(value), base + quote(fact.fact_key, safe=""))
        for fact in facts
        if isinstance(value := fact.fields.get("value"), int | float)
        and not isinstance(value, bool)
        and (when := day(fact_date(fact)))
    ]
    return sorted(points, key=lambda p: p.day)


def _scale(low: float, high: float, size: float, start: float) -> Scale:
    span = (high - low) or 1.0
    return lambda v: start + (v - low) / span * size


def lab_chart(graph: PatientGraph, slug: str) -> Markup | None:
    """The trend chart of `/labs/{slug}.md`, or None with fewer than two numeric results."""
    group = next((g for g, s in graph.lab_slugs.items() if s == slug), None)
    if group is None:
        return None
    facts = graph.lab_groups[group]
    points = _points(graph.scope.patient, facts)
    if len(points) < 2:
        return None
    return _svg(facts[0].label, show(facts[0].fields.get("unit")) or "", points, facts)


def _svg(label: str, unit: str, points: list[Point], facts: list[Fact]) -> Markup:
    ref = reference_range(facts)
    values = [p.value for p in points] + (list(ref) if ref else [])
    low, high = min(values), max(values)
    pad = (high - low) * 0.1 or 1.0
    y = _scale(low - pad, high + pad, -(HEIGHT - TOP - BOTTOM), HEIGHT - BOTTOM)
    x = _scale(0, len(points) - 1, WIDTH - LEFT - RIGHT, LEFT)
    title = f"{label}: trend of {len(points)} results"
    desc = (
        f"{len(points)} results from {points[0].day} to {points[-1].day}, between"
        f" {number(min(p.value for p in points))} and {number(max(p.value for p in points))}"
        f" {unit}; latest {number(points[-1].value)} {unit} on {points[-1].day}."
        + (f" Reference range {number(ref[0])}–{number(ref[1])} {unit} shaded." if ref else "")
        + " The results table below lists every value."
    )
    parts = [
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}"'
        f' width="{WIDTH}" height="{HEIGHT}" role="img" aria-labelledby="trend-title trend-desc">',
        f'<title id="trend-title">{escape(title)}</title>',
        f'<desc id="trend-desc">{escape(desc)}</desc>',
    ]
    if ref:
        top, bottom = y(ref[1]), y(ref[0])
        parts.append(
            f'<rect class="range" x="{LEFT}" y="{top:.1f}" width="{WIDTH - LEFT - RIGHT}"'
            f' height="{bottom - top:.1f}"><title>reference range {escape(number(ref[0]))}–'
            f"{escape(number(ref[1]))} {escape(unit)}</title></rect>"
        )
    parts += _axes(low, high, y, unit, points)
    line = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in enumerate(points))
    parts.append(f'<polyline class="line" points="{line}"/>')
    for i, p in enumerate(points):
        text = f"{p.day}: {number(p.value)} {unit}".strip()
        parts.append(
            f'<a href="{escape(p.url)}"><circle class="point" cx="{x(i):.1f}" cy="{y(p.value):.1f}"'
            f' r="5"><title>{escape(text)}</title></circle></a>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every interpolated text is escaped above


def _axes(low: float, high: float, y: Scale, unit: str, points: list[Point]) -> list[str]:
    base = HEIGHT - BOTTOM
    parts = [
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{base}" x2="{WIDTH - RIGHT}" y2="{base}"/>',
    ]
    for value in (low, high):
        parts.append(
            f'<text class="tick" x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">'
            f"{escape(number(value))}</text>"
        )
    parts.append(
        f'<text class="tick" x="{LEFT}" y="{base + 18}">{escape(points[0].day)}</text>'
        f'<text class="tick" x="{WIDTH - RIGHT}" y="{base + 18}" text-anchor="end">'
        f"{escape(points[-1].day)}</text>"
        f'<text class="tick" x="{LEFT - 6}" y="{TOP - 4}" text-anchor="end">{escape(unit)}</text>'
    )
    return parts


LANE_H, YEAR_W, LABEL_W = 34, 46, 96


def timeline_chart(graph: PatientGraph) -> Markup | None:
    """The per-year strip of `/timeline.md`, or None when nothing is dated."""
    years = list(reversed(glance(graph).items()))  # oldest first, left to right
    if not years:
        return None
    width, height = LABEL_W + YEAR_W * len(years) + RIGHT, LANE_H * len(LANES) + 28
    total = {lane: sum(counts[lane] for _, counts in years) for lane in LANES}
    desc = (
        f"From {years[0][0]} to {years[-1][0]}: "
        + ", ".join(f"{total[lane]} {lane.lower()}" for lane in LANES)
        + ". The At a glance table lists the counts per year."
    )
    parts = [
        f'<svg class="strip" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}"'
        f' width="{width}" height="{height}" role="img"'
        ' aria-labelledby="strip-title strip-desc">',
        '<title id="strip-title">Timeline at a glance</title>',
        f'<desc id="strip-desc">{escape(desc)}</desc>',
    ]
    for row, lane in enumerate(LANES):
        cy = LANE_H * row + LANE_H / 2
        parts.append(
            f'<text class="lane" x="0" y="{cy + 4:.1f}">{escape(lane)}</text>'
            f'<line class="axis" x1="{LABEL_W}" y1="{cy:.1f}" x2="{width - RIGHT}" y2="{cy:.1f}"/>'
        )
        for column, (year, counts) in enumerate(years):
            if counts[lane]:
                cx, r = LABEL_W + YEAR_W * column + YEAR_W / 2, min(4 + 2 * counts[lane], 15)
                tip = f"{year}: {counts[lane]} {lane.lower()}"
                parts.append(
                    f'<circle class="dot {escape(lane.lower())}" cx="{cx:.1f}" cy="{cy:.1f}"'
                    f' r="{r}"><title>{escape(tip)}</title></circle>'
                )
    for column, (year, _) in enumerate(years):
        x = LABEL_W + YEAR_W * column + YEAR_W / 2
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{height - 6}" text-anchor="middle">'
            f"{escape(year)}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every interpolated text is escaped above
