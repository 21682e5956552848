"""The network of a scenario, in pure Python (no ns-3): graph, topology,
routing (ECMP), qdisc (queue discs and traffic classes), tcp and scaling
(the time-preserving scale-down of every section). Imports harness.config
and harness.io.recipe_tokens (a leaf); scaling also harness.traffic and
harness.training. docs/architecture/code-map.md.
"""
