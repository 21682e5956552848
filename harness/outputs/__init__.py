"""What a person reads (written through harness.io.outdir): plots/ (figures
of a run or a sweep; plots/registry.py lists the sweep figures), report (the
sweep's HTML page, templates/) and export. Never ns-3, and never sweeps: it
draws and writes tables it is given (the findings' pages and figures are
harness.findings'). docs/architecture/code-map.md.
"""
