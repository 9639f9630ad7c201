"""Episode seeds as Gymnasium draws them: the first explicit seed seeds a
generator and plays that episode; every later reset without a seed plays a
fresh *training* seed drawn from it. Without any seed the generator starts
from the operating system's entropy (as Gymnasium's does).

Drawn seeds lie in [TRAIN_LOW, TRAIN_HIGH): above every reported
instance's test seeds (1–40) and dev seeds (1001–1035), so a learner never
trains on the held-out seeds unless it asks for one by passing it.
"""

import random

TRAIN_LOW = 1 << 20
TRAIN_HIGH = 1 << 32


class SeedStream:
    """The seeds of one environment's episodes."""

    def __init__(self):
        self._rng = None

    def next(self, seed=None):
        """The seed of the next episode: seed itself when given (and the
        generator is reseeded from it), else a fresh training seed."""
        if seed is not None:
            if isinstance(seed, bool) or not hasattr(seed, "__index__") or seed < 0:
                raise ValueError(f"a seed is a non-negative integer, got {seed!r}")
            seed = int(seed.__index__())
            self._rng = random.Random(seed)
            return seed
        if self._rng is None:
            self._rng = random.Random()
        return self._rng.randrange(TRAIN_LOW, TRAIN_HIGH)
