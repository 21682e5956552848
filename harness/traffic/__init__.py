"""What is sent, in pure Python (no ns-3): background (flow-size CDFs, the
seeded schedule), schedulers (the communication-scheduling policies' table),
profiles (the models' per-layer bytes and compute times), fusion (tensor
fusion into buffers, partitions), arrivals (Poisson arrival times, drawn
one way for every source) and services (one plug-in per [[service]] kind).
docs/architecture/code-map.md.
"""
