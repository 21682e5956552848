"""What is sent, in pure Python (no ns-3): background (flow-size CDFs, the
seeded schedule), schedulers (the communication-scheduling policies' table),
profiles (the models' per-layer bytes and compute times) and fusion (tensor
fusion into buffers, partitions). docs/architecture/code-map.md.
"""
