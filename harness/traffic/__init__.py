"""What is sent, in pure Python (no ns-3): background (flow-size CDFs, the
seeded schedule), schedulers (the communication-scheduling policies' table)
and profiles (the models' per-layer bytes and compute times). Imports
harness.config and harness.io.outdir. docs/architecture/code-map.md.
"""
