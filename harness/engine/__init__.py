"""One scenario in ns-3: planning (the Plan, pure Python; scaling, the
time-preserving scale-down), simulation (the plan run in ns-3, its tables
collected into a harness.analysis.tables.Run, the run directory), recipe
(the scenario recipe ns-3 builds from), engines (which ns-3: the wheel or a
build; ns3_build builds one), ns3, pch, pch_key and pch_child (loading ns-3
and our C++), ecmp_probe (the ECMP hash's choices, read from ns-3's
routing) and memory (the heap on huge pages). The only package that
touches ns-3 objects (an import contract of pyproject.toml).
docs/architecture/code-map.md.
"""
