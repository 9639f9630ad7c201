"""The reward: a weighted sum of per-step increments of the server's
progress tally, plus terminal terms from metrics.json (docs/python-env.md,
"Reward").

Per step (progress = the "progress" object of the server's step replies):

    time        Δ simulation time           sums to G_mk of a finished episode
    tardiness   Δ tardiness of completed jobs  sums to G_td of a finished one
    completed   Δ completed jobs            sums to G_cj
    released    Δ released jobs

At the end only (metrics.json):

    overdue     G_ut  (overdue debt of unfinished jobs)
    unfinished  G_dj  (unfinished jobs)
    violations  G_vc
    energy_overshoot  G_eo
    fallbacks   G_fb

The default, {"tardiness": -1, "overdue": -1}, sums to −(G_td + G_ut) of a
finished episode: the total lateness of every job at its end. Under
des-metrics/2 a truncated episode is scored to the horizon (G_mk is the
horizon, G_ut the debt there, and G_td includes G_ut: docs/metrics.md, "The
full obligation"), while the step increments stop where the episode
stopped: the default return of a stalled episode is then −(tardiness of
its completed jobs + G_ut at the horizon), so its unfinished jobs are
charged to the horizon and stalling never pays (python/tests/test_reward.py).
"""

STEP_TERMS = ("time", "tardiness", "completed", "released")
END_TERMS = {"overdue": "G_ut", "unfinished": "G_dj", "violations": "G_vc", "energy_overshoot": "G_eo",
             "fallbacks": "G_fb"}
DEFAULT_WEIGHTS = {"tardiness": -1.0, "overdue": -1.0}


class Reward:
    """reward is None (the default weights), a dict of weights over the
    terms above, or a callable f(prev, progress, metrics) -> float where
    prev and progress are progress dicts and metrics is the metrics.json
    dict at the episode's last step, None before."""

    def __init__(self, reward=None):
        if reward is None:
            reward = DEFAULT_WEIGHTS
        if callable(reward):
            self._fn, self.weights = reward, None
            return
        if not isinstance(reward, dict):
            raise TypeError("reward must be None, a dict of weights or a callable")
        unknown = set(reward) - set(STEP_TERMS) - set(END_TERMS)
        if unknown:
            raise ValueError(f"unknown reward terms {sorted(unknown)}; known: "
                             f"{list(STEP_TERMS) + list(END_TERMS)}")
        self.weights = {k: float(v) for k, v in reward.items()}
        self._fn = None

    def __call__(self, prev, progress, metrics=None):
        if self._fn is not None:
            return float(self._fn(prev, progress, metrics))
        r = 0.0
        for k in STEP_TERMS:
            w = self.weights.get(k)
            if w:
                r += w * (float(progress.get(k, 0)) - float(prev.get(k, 0)))
        if metrics is not None:
            for k, key in END_TERMS.items():
                w = self.weights.get(k)
                if w:
                    r += w * float(metrics.get(key, 0))
        return r
