"""One scenario in ns-3: ns3 and pch (loading ns-3 and our C++), recipe (the scenario
recipe ns-3 builds from, its tokens in harness.io.recipe_tokens), memory (the heap on
huge pages) and simulation (plan -> ns-3 -> a harness.analysis.tables.Run ->
run directory). The only package
that touches ns-3 objects. Imports harness.config, harness.network,
harness.traffic, harness.training, harness.analysis and
harness.io.outdir; never harness.sweeps or the figures.
docs/architecture/code-map.md.
"""
