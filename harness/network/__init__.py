"""The network of a scenario, in pure Python (no ns-3): graph, topology,
routing (ECMP), qdisc (queue discs and traffic classes, each written as an
ns-3 TypeId with its attributes) and tcp. docs/architecture/code-map.md.
"""
