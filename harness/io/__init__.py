"""The bottom I/O layer: where results go and how files are written
(outdir: output directories, their checks, the one atomic writer; lock: a
sweep directory's owner) and the scenario recipe's format (recipe_tokens).
Imports only harness.config, so every layer above may use it."""
