"""What a person reads (written through harness.io.outdir): plots/ (figures
of a run or a sweep; plots/registry.py lists the sweep figures), report (the
sweep's HTML page, templates/), export and findings_pages. Never ns-3.
docs/architecture/code-map.md.
"""
