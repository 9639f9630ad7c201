"""One episode's bookkeeping on the client side: it turns the server's
batch results into the PettingZoo-shaped tuples. ParallelEnv drives one
session with batches of one item, VectorEnv drives n of them with one
batch per call, so both see exactly the same results."""

from . import features
from .client import ItemError

# The metrics.json statuses of an end the agents caused: the plant
# finished, or the agents' choices stalled it for good. They end the
# episode as a termination (nothing follows it; the reward of the last step
# already holds the unfinished work's penalty to the horizon); any other
# status (time_limit, decision_limit, aborted, controller_failed) is a cut
# from outside the task, a truncation.
TERMINAL_STATUSES = ("done", "deadlock", "no_progress")

# The 15 primary metrics (docs/metrics.md).
PRIMARY_METRICS = ("G_mk", "G_td", "G_cj", "G_vc", "G_eo", "G_ed", "G_en", "G_ds", "G_cm", "G_fb", "G_llm",
                   "G_tr", "G_dj", "G_ut", "G_do")

try:  # optional: arrays beside the lists
    import numpy as _np
except ImportError:  # pragma: no cover - NumPy is never required
    _np = None


def numpy_available():
    return _np is not None


class Session:
    """The state of one episode: its id, agents, layout, pending decision
    and last progress."""

    def __init__(self, instance, paradigm, reward, use_numpy=None, play=None, others=None):
        self.instance, self.paradigm, self.reward = instance, paradigm, reward
        # play: None plays every agent; a list plays those (an empty one,
        # none: the server plays the whole episode with others).
        if isinstance(play, str):
            raise TypeError("play must be a list of agent ids, not a string")
        self.play = None if play is None else list(play)
        if others is not None and self.play is None:
            raise ValueError("others names who answers the agents the client does not play: give play too")
        self.others = others
        self.offer = []
        self.started = False
        self.use_numpy = numpy_available() if use_numpy is None else bool(use_numpy and _np is not None)
        self.id = None
        self.possible_agents = []
        self.agents = []
        self.layout = []
        self.decision = None
        self.progress = {}
        self.metrics = None
        self.seed = None

    # -- create ---------------------------------------------------------
    def create_item(self, seed):
        # progress: the plant-wide tally the reward is computed from (more
        # than the agents' payloads show; docs/http-server.md).
        item = {"instance": self.instance, "paradigm": self.paradigm, "progress": True}
        if self.play is not None:
            item["play"] = self.play
            if self.others is not None:
                item["others"] = self.others
        if seed is not None:
            item["seed"] = int(seed)
        return item

    def learn(self, res):
        """Take the episode's agents, layout and offer from a create
        result, so that the spaces exist before the first reset."""
        if res.get("code") != 201:
            raise ItemError(res.get("code", 0), res.get("error", "create failed"))
        ep = res["episode"]
        self.possible_agents = list(ep["agents"] if self.play is None else ep.get("played") or ())
        self.layout = ep["layout"]
        self.offer = list(ep.get("offer") or ())
        self.started = True

    def on_created(self, res):
        """(observations, infos) of a new episode; None when the server had
        no decision yet within its long-poll (ask with peek_item, and hand
        the answer to on_ready)."""
        if res.get("code") != 201:
            raise ItemError(res.get("code", 0), res.get("error", "create failed"))
        # A client that plays some agents has only those (the server
        # answers the rest and never shows them).
        self.learn(res)
        self.id, self.seed = res["id"], res["episode"]["seed"]
        self.agents = list(self.possible_agents)
        self.metrics, self.decision = None, None
        self.progress = res.get("progress") or {}
        if res.get("decision") is None and not res.get("done"):
            return None
        return self.on_ready(res)

    def on_ready(self, res):
        """The first (observations, infos) of the episode, from the create
        result or from the answer to a later peek_item; None while the
        server still has no decision (code 202)."""
        code = res.get("code")
        if code == 202:
            return None
        if code not in (200, 201):
            raise ItemError(code, res.get("error", ""), self.id or "", res.get("consumed", False))
        self.progress = res.get("progress") or self.progress
        self._take(res)
        if res.get("done"):  # no decision for this client (it plays no agent)
            self.metrics, self.agents = res.get("metrics") or {}, []
        obs = self._observations()
        return obs, self._infos({})

    # -- step -----------------------------------------------------------
    def step_item(self, actions):
        """The batch item for actions (a dict agent -> index). Actions of
        inactive agents are ignored; an active agent without one falls back
        (infos[agent]["problem"] says so)."""
        if self.id is None:
            raise RuntimeError("call reset() first")
        if self.decision is None:
            raise RuntimeError("the episode has ended; call reset()")
        unknown = sorted(str(a) for a in actions if a not in self.possible_agents)
        if unknown:  # a misspelled agent would otherwise fall back in silence
            raise KeyError(f"actions for agents {unknown} that are not in this episode "
                           f"(possible_agents: {self.possible_agents})")
        send = {}
        for agent in self.decision["active_agents"]:
            if agent in actions and actions[agent] is not None:
                a = actions[agent]
                if not hasattr(a, "__index__") or isinstance(a, bool):
                    raise TypeError(f"action of {agent} must be an integer, got {a!r}")
                send[agent] = int(a.__index__())
        return {"id": self.id, "step": self.decision["step"], "actions": send}

    def peek_item(self):
        return {"id": self.id}

    def on_stepped(self, res):
        """The step tuple from a step result; None when the server had no
        decision yet (code 202: ask again with peek_item)."""
        code = res.get("code")
        if code == 202:
            return None
        if code != 200:
            raise ItemError(code, res.get("error", ""), self.id or "", res.get("consumed", False))
        prev = self.progress
        self.progress = res.get("progress") or prev
        problems = res.get("problems") or {}
        live = list(self.agents)
        if res.get("done"):
            m = res.get("metrics") or {}
            r = self.reward(prev, self.progress, m)
            self.metrics, self.decision = m, None
            status = res.get("status", "")
            terminated = status in TERMINAL_STATUSES
            obs = {a: self._obs(a, None) for a in live}
            info = {"metrics": {k: m.get(k) for k in PRIMARY_METRICS}, "metrics_json": m, "status": status,
                    "seed": self.seed}
            infos = {}
            for a in live:
                infos[a] = dict(info, active=False, action_mask=self._mask(a, None), progress=dict(self.progress))
                if a in problems:
                    infos[a]["problem"] = problems[a]
            self.agents = []
            return (obs, {a: r for a in live}, {a: terminated for a in live},
                    {a: not terminated for a in live}, infos)
        r = self.reward(prev, self.progress, None)
        self._take(res)
        obs = self._observations()
        return (obs, {a: r for a in live}, {a: False for a in live}, {a: False for a in live},
                self._infos(problems))

    # -- views ----------------------------------------------------------
    def _take(self, res):
        d = res.get("decision")
        if d is None and not res.get("done"):
            raise ItemError(res.get("code", 0), "the server sent no decision", self.id or "")
        self.decision = d
        if d is not None:
            for agent, view in d["active_agents"].items():
                if agent not in self.possible_agents:
                    raise RuntimeError(f"active agent {agent} is not among the episode's agents")
                if len(view.get("options") or ()) > self.action_count(agent):
                    raise RuntimeError(f"{agent} has more options than its action space")

    def view(self, agent):
        if self.decision is None:
            return None
        return self.decision["active_agents"].get(agent)

    def action_count(self, agent):
        return features.action_count(agent, self.layout, self.offer)

    def vector_length(self, agent):
        return features.vector_length(agent, self.layout, self.offer)

    def _mask(self, agent, view):
        n = self.action_count(agent)
        if view is None:
            return [0] * n
        legal = set(view.get("legal_actions") or ())
        return [1 if i in legal else 0 for i in range(n)]

    def _obs(self, agent, view):
        now = float(self.decision["time"]) if self.decision else float(self.progress.get("time", 0.0))
        vec = features.encode(agent, view, now, self.layout, self.offer)
        o = {"vector": vec, "payload": view}
        if self.use_numpy:
            o["array"] = _np.asarray(vec, dtype=_np.float32)
        return o

    def _observations(self):
        return {a: self._obs(a, self.view(a)) for a in self.agents}

    def _infos(self, problems):
        out = {}
        for a in self.agents:
            v = self.view(a)
            info = {"active": v is not None, "action_mask": self._mask(a, v), "progress": dict(self.progress),
                    "seed": self.seed}
            if self.decision is not None:
                info["step"] = self.decision["step"]
                info["time"] = self.decision["time"]
            if v is not None:
                info["kind"] = v.get("kind")
            if a in problems:
                info["problem"] = problems[a]
            out[a] = info
        return out
