"""Minimal action and observation spaces, shaped like Gymnasium's
``Discrete`` and ``Box`` (``n``, ``shape``, ``sample``, ``contains``,
``seed``) without importing Gymnasium."""

import random


class Discrete:
    """The actions 0 … n-1. ``sample(mask)`` draws uniformly among the
    actions whose mask entry is 1 (all of them without a mask)."""

    def __init__(self, n, seed=None):
        if n < 1:
            raise ValueError("Discrete needs n >= 1")
        self.n = int(n)
        self.shape = ()
        self.dtype = int
        self._rng = random.Random(seed)

    def seed(self, seed=None):
        self._rng = random.Random(seed)
        return [seed]

    def sample(self, mask=None):
        if mask is None:
            return self._rng.randrange(self.n)
        if len(mask) != self.n:
            raise ValueError(f"mask of length {len(mask)} for Discrete({self.n})")
        legal = [i for i, m in enumerate(mask) if m]
        if not legal:
            raise ValueError("no action is allowed by the mask (is the agent active?)")
        return self._rng.choice(legal)

    def contains(self, x):
        return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < self.n

    __contains__ = contains

    def __repr__(self):
        return f"Discrete({self.n})"

    def __eq__(self, other):
        return isinstance(other, Discrete) and other.n == self.n


class Box:
    """Real vectors of a fixed length (``shape == (length,)``), unbounded
    unless low/high are given."""

    def __init__(self, length, low=float("-inf"), high=float("inf")):
        self.shape = (int(length),)
        self.low, self.high = low, high
        self.dtype = float

    def contains(self, x):
        try:
            return len(x) == self.shape[0] and all(self.low <= float(v) <= self.high for v in x)
        except TypeError:
            return False

    __contains__ = contains

    def __repr__(self):
        return f"Box({self.shape[0]})"


class Dict:
    """A dict of spaces: the observation is {"vector": …, "payload": …};
    only "vector" is checked by ``contains`` (the payload is the structured
    view of docs/payload.md)."""

    def __init__(self, spaces):
        self.spaces = dict(spaces)

    def __getitem__(self, key):
        return self.spaces[key]

    def contains(self, x):
        return isinstance(x, dict) and all(
            k in x and (sp is None or sp.contains(x[k])) for k, sp in self.spaces.items()
        )

    __contains__ = contains

    def __repr__(self):
        return "Dict(" + ", ".join(f"{k}: {v!r}" for k, v in self.spaces.items()) + ")"
