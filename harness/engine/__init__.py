"""One scenario in ns-3: planning (the Plan, pure Python), simulation (the
plan run in ns-3, its tables collected into a harness.analysis.tables.Run,
the run directory), recipe (the scenario recipe ns-3 builds from), ns3,
pch, pch_key and pch_child (loading ns-3 and our C++) and memory (the heap
on huge pages). The only package that touches ns-3 objects (an import
contract of pyproject.toml). docs/architecture/code-map.md.
"""
