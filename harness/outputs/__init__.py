"""What a person reads: outdir (where results go, the one atomic writer: a
leaf every layer may import), plots/ (figures of a run or a sweep) and
report (the sweep's HTML page, templates/). The figures and the report read
tables through harness.analysis only (and harness.config, a sweep's cells
and a search's words from harness.sweeps); never ns-3.
docs/architecture/code-map.md.
"""
