"""What a person reads (written through harness.io.outdir): plots/ (figures of a run or a sweep) and
report (the sweep's HTML page, templates/). The figures and the report read
tables through harness.analysis only (and harness.config, a sweep's cells
and a search's words from harness.sweeps); never ns-3.
docs/architecture/code-map.md.
"""
