"""The adaptive seeding's rules in words, said once, beside harness.sweeps.adaptive
(which implements them): `harness sweep --help` and the docs take these texts.
A leaf module, so that the command's help needs no pandas."""

#: How added seeds are ordered and what the budget does, said once:
#: `harness sweep --help` and the docs (sweeps, reading the map) take these words.
SEED_ORDER = (
    "Seeds are added point by point, not round by round: as soon as every cell of a point has "
    "ended, that point alone is judged from its own cells and, if its training verdict is still "
    "undecided and it has fewer than max_seeds, its next seed (both arms) starts at once, ahead "
    "of the cells not started yet. So the points whose cells end first are served first.")
BUDGET_MEANING = (
    "A budget is wall time from the sweep's start: a point gets its next seed only where that "
    "seed fits in what is left after the cells already running or waiting, a point's cost being "
    "its cells' measured wall time so far; a point projected to be decided within max_seeds "
    "(seeds_to_decide) gets it only where its later seeds fit too. The grid's own cells always "
    "run, whatever the budget.")
