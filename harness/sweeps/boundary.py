"""Where the training slowdown crosses a threshold along one numeric field:
sequential bisection over probes judged at 95 % (pure logic, no ns-3).

A probe is one value of the searched field (at one point of the other axes);
its paired iteration-time change (low vs same, harness.analysis.stats) is judged
against the threshold: `below` when the whole 95 % interval is at or below it
(the training classes count a slowdown equal to a limit in the lower class),
`above` when the whole interval is above it, else `undecided` (the runner adds
seeds until it is decided or the probe's seeds run out). The slowdown is
taken to grow with the field (more background, more slowdown): the search
probes the range's low end, then halves the bracket [a, b] (a: the highest
value decided below, b: the lowest decided above, or the range's high end)
until it is at most `tolerance` wide. With log spacing it halves the
bracket's ratio instead (the next probe is sqrt(a b)) until b / a is at most
`tolerance`: loads and rates that a map steps by doubling are searched in
even steps of that kind, and a bracket of one map step costs fewer probes.
The high end is probed only when the bracket reaches it (there it is
costliest, and a crossing inside the range never needs it), so a high end
still below the threshold ends the search "above range". The last halving
(one probe left to bring the bracket within the tolerance) probes the end
of the values that do so away from where the probes so far put the
crossing, not the middle: a probe far from the crossing is decided with
fewer seeds.

An undecided probe (its interval still straddles the threshold after
max_seeds) means the crossing is near it, where the slowdown is within
noise of the threshold: more seeds there buy little. The search goes on
around it instead: the undecided probes inside the bracket form a band,
and the search probes a window of the tolerance's width around the band,
each of its sides at least a quarter of the tolerance (log: a factor
tol ** 0.25) outside it: first reusing a decided end (a·tol above a, or
b/tol below b, when that clears the band so), else both sides, the upper
first, and the window set high: its lower side a quarter of the tolerance
below the band, its upper side the rest of the width above it. The
slowdown grows faster above the crossing than below it (queues fill faster
than linearly with load), so a probe far above the band is decided with
fewer seeds than one as far below, the upper side decided above often
brings the bracket's high end within the tolerance of a decided low end
at once, and a search that gives up later has its bracket closed from
above already. Each side
decided narrows the bracket; a side undecided widens the band. The search
gives up ("undecided between a and b") after max_undecided undecided
probes and one more, or when the band spans more than half the tolerance
(log: a factor sqrt(tol)), as a window would then sit too close to it to
decide; with nothing decided above the band, it first closes the bracket
one tolerance above the band, then at the high end. An undecided low end is
a band of its own: the search looks for a decided probe above it and ends
undecided with no low end (nothing below lo can be probed).

next_probe decides from the probes so far alone, so a search is replayed
exactly from its probes' results (a resumed search makes the same decisions),
and is tested with fake oracles (tests/test_boundary.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

# a probe's side of the threshold (below, above, undecided) is harness.analysis.stats'
# verdict, in its words
from harness.analysis.stats import ABOVE, BELOW, UNDECIDED  # noqa: F401
from harness.analysis.stats import threshold_side as side  # noqa: F401
from harness.config.schema.grid import Search

#: How a search ended (the `status` column of boundary.parquet): harness.analysis.crossings'
from harness.analysis.crossings import (ABOVE_RANGE, BELOW_RANGE, BRACKETED,  # noqa: F401
                                        UNDECIDED_BETWEEN)

#: Undecided probes a search goes on after by default (each cost max_seeds);
#: the next ends it: [search] max_undecided's default, the one place it is set.
MAX_UNDECIDED = Search.model_fields["max_undecided"].default

#: Significant digits of a probe's value in its cells' scenario. A value is
#: part of the cells' digest, so two values equal but for floating-point
#: rounding (a window's edge that lands on a bisection point, 65.05 x 2^(3/4)
#: and sqrt(65.05 x 184), or on the map's 92, 54.7 x 2^(-1/4) x 2) would be
#: two probes with cells of their own (and results of their own). A search
#: computes each value from the exact values of its probes, whose errors are
#: ~1e-15, and the value is rounded only where it names cells (canonical) and
#: where probes are compared: rounded values chained through each other
#: were not one (65.0538239 / 2^(1/4) x 2 came out 92.0000004, whose cells
#: at R = 8 were undecided where 92's were above, with the same seeds).
PROBE_DIGITS = 9
#: Slack for comparisons of computed values (floating-point error, and values
#: rounded to PROBE_DIGITS where they name cells).
_SLACK = 1e-8


#: The share of its tolerance a search's slack may take: a finer tolerance
#: would end the search at its own slack and report a wider bracket
#: "bracketed" (_SLACK at 1 % of the tolerance keeps the claim honest).
_SLACK_SHARE = 0.01


def finest_tolerance(lo: float, hi: float, integral: bool = False, log: bool = False) -> float:
    """The finest tolerance a search over [lo, hi] resolves: its slack
    (_SLACK, relative to the range's values; log: a factor) at most
    _SLACK_SHARE of it; an integer field's probes are at least 1 apart
    (log: a factor hi / (hi - 1), its nearest whole numbers)."""
    if log:
        finest = 1 + _SLACK / _SLACK_SHARE
        return max(finest, hi / (hi - 1)) if integral and hi > 1 else finest
    finest = _SLACK / _SLACK_SHARE * max(abs(lo), abs(hi))
    return max(finest, 1.0) if integral else finest


def canonical(value: float) -> float:
    """A probe's value as its cells take it and as compared with other
    probes: rounded to PROBE_DIGITS significant digits."""
    return float(f"{value:.{PROBE_DIGITS}g}")


def probed(value: float, seen: dict[float, "Observation"]) -> bool:
    """Whether a value was probed already (compared as its cells take it)."""
    return canonical(value) in {canonical(v) for v in seen}


@dataclass(frozen=True)
class Range:
    """The searched values: [lo, hi], a bracket this narrow is enough
    (log: b / a at most `tolerance`, else b - a); integral: the field takes
    integers (probes are whole numbers); max_undecided: the undecided probes
    a search goes on after."""

    lo: float
    hi: float
    tolerance: float
    integral: bool = False
    log: bool = False
    max_undecided: int = MAX_UNDECIDED

    def middle(self, a: float, b: float) -> float:
        """The bisection's next probe inside [a, b]."""
        mid = math.sqrt(a * b) if self.log else (a + b) / 2
        return math.floor(mid) if self.integral else mid

    def step(self, value: float, times: float) -> float:
        """value moved by `times` tolerances (log: multiplied by tol**times)."""
        return value * self.tolerance ** times if self.log else value + times * self.tolerance

    def narrow_enough(self, a: float, b: float) -> bool:
        # a bracket of exactly the tolerance may come out a rounding error wider
        if self.log:
            return b / a <= self.tolerance * (1 + _SLACK)
        return b - a <= self.tolerance + _SLACK * max(abs(a), abs(b), self.tolerance)


@dataclass(frozen=True)
class Observation:
    """A probe's outcome: its value, its side of the threshold, and the
    slowdown estimate with its interval (for the interpolation and the table)."""

    value: float
    side: str
    change: float = math.nan
    low: float = math.nan
    high: float = math.nan
    seeds: int = 0


@dataclass(frozen=True)
class Crossing:
    """A finished search: its status, the crossing estimate, the bracket
    [low, high] (NaN where no probe bounds that side) and its probes."""

    status: str
    estimate: float
    low: float
    high: float
    probes: int


def _bracket(history: list[Observation]) -> tuple[float, float]:
    below = [o.value for o in history if o.side == BELOW]
    above = [o.value for o in history if o.side == ABOVE]
    return (max(below) if below else math.nan, min(above) if above else math.nan)


def interpolate(a: Observation, b: Observation, threshold: float, log: bool = False) -> float:
    """Where the straight line through (a, its slowdown) and (b, its
    slowdown) meets the threshold, kept inside [a, b]; the middle when the
    estimates do not rise from a to b (a stall, noise). log: the line is
    drawn over log(value), as the probes were spaced."""
    rise = b.change - a.change
    if not (math.isfinite(rise) and rise > 0):
        to, back = (math.log, math.exp) if log else (float, float)
        return back((to(a.value) + to(b.value)) / 2)
    return min(b.value, max(a.value, _line(a, b, threshold, log)))


def _line(a: Observation, b: Observation, threshold: float, log: bool = False) -> float:
    """Where the straight line through (a, its slowdown) and (b, its
    slowdown), rising, meets the threshold, anywhere (inf past the floats)."""
    to = math.log if log else float
    x = to(a.value) + (threshold - a.change) / (b.change - a.change) * (to(b.value) - to(a.value))
    try:
        return math.exp(x) if log else x
    except OverflowError:
        return math.inf


def estimate(history: list[Observation], a: float, b: float, threshold: float,
             log: bool = False) -> float:
    """The crossing inside the bracket [a, b]: the line through the probes
    in it (undecided ones too: their estimates are near the threshold),
    where it first rises through the threshold; a to b's line otherwise."""
    inside = sorted((o for o in history if a <= o.value <= b and math.isfinite(o.change)),
                    key=lambda o: o.value)
    for left, right in zip(inside, inside[1:]):
        if left.change <= threshold < right.change:
            return interpolate(left, right, threshold, log)
    seen = {o.value: o for o in history}
    return interpolate(seen[a], seen[b], threshold, log)


def band(history: list[Observation], low: float, high: float) -> tuple[float, float]:
    """The lowest and highest undecided probe inside the bracket [low, high]
    (an end NaN: unbounded on that side), where the slowdown was within noise
    of the threshold with max_seeds; NaN, NaN when none was."""
    lo = low if math.isfinite(low) else -math.inf
    hi = high if math.isfinite(high) else math.inf
    inside = [o.value for o in history if o.side == UNDECIDED and lo <= o.value <= hi]
    return (min(inside), max(inside)) if inside else (math.nan, math.nan)


def _window(span: Range, a: float, b: float, b_decided: bool, low: float, high: float,
            seen: dict[float, Observation]) -> float | None:
    """The next probe around the band [low, high] of undecided probes inside
    (a, b), or None when no window of the tolerance's width can clear it:
    every probe of a window lies at least a quarter of the tolerance (log: a
    factor tol ** 0.25) outside the band, or it would be as undecided (see
    the module doc)."""

    def clears(value: float, edge: float, direction: float) -> bool:   # +1 above, -1 below
        gap = span.step(edge, direction * 0.25)
        return direction * (value - gap) >= -_SLACK * abs(gap)

    if clears(span.step(a, +1), high, +1):              # a decided end clears the band
        wanted = [span.step(a, +1)]
    elif b_decided and clears(span.step(b, -1), low, -1):
        wanted = [span.step(b, -1)]
    else:
        half = math.sqrt(span.tolerance) if span.log else span.tolerance / 2
        if (high / low if span.log else high - low) > half * (1 + _SLACK):
            return None
        # the window [low / tol^(1/4), low * tol^(3/4)] (linear: low - tol / 4,
        # low + 3 tol / 4): its lower side as close to the band as a probe
        # may be, its upper side as far above it as the width allows, as the
        # slowdown climbs faster above the crossing than below it
        lower = span.step(low, -0.25)
        wanted = [span.step(lower, +1), lower]
    for value in wanted:
        if span.integral:       # stay inside the window: round towards the band
            value = math.ceil(value) if value < low else math.floor(value)
        if a < value < b and not low <= value <= high and not probed(value, seen):
            return value
    return None


def _guess(history: list[Observation], seen: dict[float, Observation], a: float,
           end: float, threshold: float, log: bool) -> float | None:
    """Where the slowdown is expected to cross the threshold, from the probes
    so far: interpolated between a and end when end was probed, else the line
    through the two highest probes up to a, extended; None when they do not rise."""
    if end in seen:
        return interpolate(seen[a], seen[end], threshold, log)
    lower = sorted((o for o in history if o.value <= a and math.isfinite(o.change)),
                   key=lambda o: o.value)[-2:]
    if len(lower) < 2 or not lower[1].change > lower[0].change:
        return None
    return _line(lower[0], lower[1], threshold, log)


def _last_probe(span: Range, a: float, end: float, history: list[Observation],
                seen: dict[float, Observation], threshold: float) -> float | None:
    """When one probe can bring the bracket [a, end] within the tolerance: the
    one as far from the expected crossing (_guess) as that allows, its end of
    [end / tol, a * tol] (linear: [end - tol, a + tol]) away from the guess,
    as a probe far from the crossing is decided with fewer seeds (the
    windows' reasoning, before any probe is undecided); None (bisect) when
    more than one probe is needed or the probes give no guess."""
    lowest, highest = span.step(end, -1), span.step(a, +1)
    if span.integral:
        lowest, highest = math.ceil(lowest - _SLACK), math.floor(highest + _SLACK)
    if not a < lowest <= highest < end:
        return None
    guess = _guess(history, seen, a, end, threshold, span.log)
    if guess is None:
        return None
    middle = math.sqrt(a * end) if span.log else (a + end) / 2
    value = lowest if guess >= middle else highest
    return None if probed(value, seen) else value


def _above_band(span: Range, high: float, seen: dict[float, Observation],
                undecided: int) -> float:
    """A search that gives up with no decided probe above its band closes the
    bracket from above: one tolerance above the band (a tighter bound than
    the high end, and a cheaper probe), then, if that is undecided too, the
    high end."""
    value = span.step(high, +1)
    if span.integral:
        value = math.ceil(value)
    if undecided <= span.max_undecided + 1 and value < span.hi and not probed(value, seen):
        return value
    return span.hi


def next_probe(span: Range, threshold: float,
               history: list[Observation]) -> float | Crossing:
    """The next value to probe, or the search's end, from the probes so far
    (in the order probed)."""
    n = len(history)
    seen = {o.value: o for o in history}
    if span.lo not in seen:
        return span.lo
    if seen[span.lo].side == ABOVE:
        return Crossing(BELOW_RANGE, math.nan, math.nan, span.lo, n)
    top = seen.get(span.hi)
    if top is not None and top.side == BELOW:
        return Crossing(ABOVE_RANGE, math.nan, span.hi, math.nan, n)
    a, b = _bracket(history)
    end = b if math.isfinite(b) else span.hi       # the high end: probed when needed
    # An undecided low end with no decided probe above it: the crossing is
    # within noise of the range's start. The search goes on from it as from a
    # band of its own, for a decided probe above within the tolerance, and ends
    # undecided with no low end (nothing below lo can be probed).
    open_low = seen[span.lo].side == UNDECIDED and not math.isfinite(a)
    if open_low:
        a = span.lo
    low_end = math.nan if open_low else a          # the bracket's reported low end
    if (top is not None and top.side == UNDECIDED) or not a < end:
        # an undecided high end, or probes that contradict each other (noise)
        return Crossing(UNDECIDED_BETWEEN, math.nan, low_end, b, n)
    # undecided probes are never end (decided, or the high end unprobed), nor
    # a unless it is an undecided low end (then the band starts at it)
    low, high = band(history, a, end)
    banded = math.isfinite(low)
    mid = span.middle(a, end)
    if span.narrow_enough(a, end) or (not banded and not a < mid < end):
        if not math.isfinite(b):
            return span.hi
        if open_low:
            return Crossing(UNDECIDED_BETWEEN, math.nan, low_end, b, n)
        return Crossing(BRACKETED, estimate(history, a, b, threshold, span.log), a, b, n)
    if not banded:
        last = _last_probe(span, a, end, history, seen, threshold)
        return mid if last is None else last
    undecided = sum(o.side == UNDECIDED for o in history)
    window = _window(span, a, end, math.isfinite(b), low, high, seen) \
        if undecided <= span.max_undecided else None
    if window is not None:
        return window
    if not math.isfinite(b):   # "undecided between a and b" needs b decided
        return _above_band(span, high, seen, undecided)
    return Crossing(UNDECIDED_BETWEEN, math.nan, low_end, b, n)


def search(span: Range, threshold: float,
           probe: Callable[[float], Observation]) -> tuple[Crossing, list[Observation]]:
    """Run one search to its end with `probe` (value -> its outcome, seeds
    added already): the crossing and the probes in order."""
    history: list[Observation] = []
    while True:
        step = next_probe(span, threshold, history)
        if isinstance(step, Crossing):
            return step, history
        history.append(probe(step))


def most_probes(span: Range) -> int:
    """The probes one search makes at most (for cost estimates): both ends
    and the halvings until the bracket is within the tolerance, and two
    window probes for each undecided probe the search goes on after."""
    if span.log:   # halving log(b / a); a whole-number field cannot go below 1 apart
        width, tolerance = math.log(span.hi / span.lo), math.log(span.tolerance)
    else:
        width, tolerance = span.hi - span.lo, span.tolerance
    halvings = 0
    while width > tolerance * (1 + 1e-9) and (not span.integral or span.log or width > 1):
        width /= 2
        halvings += 1
    return 2 + halvings + 2 * span.max_undecided
