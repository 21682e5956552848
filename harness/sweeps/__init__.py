"""Many runs: grid and cells, sweepdir (the sweep directory), sweeping
(run_sweep) and executors (the processes cells run in; failures: a failed
cell in words), adaptive seeds (adaptive_text: its rules in words), cost
estimates, aggregate (the sweep's tables), cell_cache (cached cells: a
sweep's costly cells kept to be taken instead of run), boundary (the
bisection), search_plan and searching (running it), alone (each job
against itself alone). Draws nothing: the service layer draws; the
findings' kept results are harness.findings'.
docs/architecture/code-map.md.
"""
