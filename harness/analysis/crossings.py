"""How a boundary search ended at a point and threshold, in the words of the
`status` column of its boundary.parquet: said once for the search that
decides it (harness.sweeps.boundary) and the figure and tables that show it
(harness.outputs.plots.boundary_figure), pure names."""

from __future__ import annotations

BRACKETED = "bracketed"        # decided probes bracket it within the tolerance
UNDECIDED_BETWEEN = "undecided"  # a probe stayed undecided: somewhere in [a, b]
BELOW_RANGE = "below range"    # the low end is already above the threshold
ABOVE_RANGE = "above range"    # the high end is still below it
