"""The harness's use cases, one module each (running, sweeping, boundary,
results, profile, alone, findings, references: the reference suite,
engine_choice: which ns-3 runs), with every pre-check in checks.py.

Both front doors call them: harness.cli (parses arguments and prints) and
harness.api (Python values in, tables out). A use case checks all its input
before anything runs or is written and raises the harness's ConfigError
types (SweepError for a sweep directory that cannot be used as asked); the
CLI prints one line and exits 2, the API lets it propagate. The messages
name each input as the caller spells it (checks.Names: `-o` or `out`).
Importing a module here is cheap: what runs loads on the first call.
"""
