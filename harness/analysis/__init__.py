"""A run's tables and what is computed from them, pure pandas, no ns-3:
tables (Run, the one type for a run's tables in memory or on disk; the
readers of run and sweep directories; read_csv), metrics, stats (intervals,
and every verdict with its thresholds and words), claims and analytic (the
no-contention model). Imports harness.config, harness.traffic.profiles
(analytic) and, where a Run is saved, harness.io.outdir.
docs/architecture/code-map.md.
"""
