"""The PettingZoo Parallel API shape over one episode of des serve
(without importing PettingZoo)."""

from . import gantt, spaces
from .client import Client
from .reward import Reward
from .seeding import SeedStream
from .session import Session


class ParallelEnv:
    """A multi-agent environment: one DESBench episode hosted by
    ``coordbench des serve``.

    possible_agents are the agents the paradigm may activate (plant,
    area:<id>, cell:<id>, mode_selector; the server's "agents"), fixed once
    the first reset has talked to the server; with ``play``, only the
    agents listed there: the server answers the others with the built-in
    controller ``others`` (default "rule") and never shows them. At each step only the agents with a
    pending decision act: their infos have "active": True and an
    action_mask with at least one 1; every other agent gets a zero vector,
    payload None, an all-zero mask, and its action is ignored. Every live
    agent gets the same (team) reward. All agents terminate together when
    the episode ends by itself or by the agents' doing (status done,
    deadlock or no_progress), or truncate together when it was cut from
    outside (the horizon, the decision limit), and then leave ``agents``.
    """

    metadata = {"name": "coordbench_des_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(self, base_url="http://127.0.0.1:8765", token=None, instance="A3C9-1", paradigm="centralized",
                 seed=None, reward=None, client=None, use_numpy=None, render_mode=None, play=None, others=None):
        self.client = client or Client(base_url, token)
        self.render_mode = render_mode
        self._seed = seed
        self._seeds = SeedStream()
        self._session = Session(instance, paradigm, Reward(reward), use_numpy, play, others)
        self._spaces = {}

    # -- PettingZoo API -----------------------------------------------------
    @property
    def possible_agents(self):
        self._require_started()
        return list(self._session.possible_agents)

    @property
    def agents(self):
        return list(self._session.agents)

    @property
    def num_agents(self):
        return len(self._session.agents)

    @property
    def max_num_agents(self):
        return len(self.possible_agents)

    def reset(self, seed=None, options=None):
        """Start a new episode (closing the previous one), Gymnasium's way:
        seed (or options["seed"]; on the first reset, else the
        constructor's seed) plays that seed and seeds a generator; a reset
        without one plays a fresh training seed drawn from the generator
        (docs/python-env.md, "Seeding"). infos[agent]["seed"] names the
        seed played; the same seed and actions give the same observations."""
        if options and "seed" in options:
            seed = options["seed"]
        if seed is None and not self._session.started:
            seed = self._seed
        seed = self._seeds.next(seed)
        self._close_episode()
        s = self._session
        (res,) = self.client.batch_create([s.create_item(seed)])
        out = s.on_created(res)
        while out is None:  # no decision within the server's long-poll: wait again
            (res,) = self.client.batch_step([s.peek_item()])
            out = s.on_ready(res)
        self._make_spaces(seed)
        return out

    def step(self, actions):
        """actions: {agent: index}. Returns (observations, rewards,
        terminations, truncations, infos), each keyed by the agents live
        before the step."""
        s = self._session
        (res,) = self.client.batch_step([s.step_item(actions)])
        out = s.on_stepped(res)
        while out is None:  # the server had nothing yet: wait again
            (res,) = self.client.batch_step([s.peek_item()])
            out = s.on_stepped(res)
        return out

    @property
    def unwrapped(self):
        return self

    @property
    def action_spaces(self):
        self._require_started()
        return {a: sp[0] for a, sp in self._spaces.items()}

    @property
    def observation_spaces(self):
        self._require_started()
        return {a: sp[1] for a, sp in self._spaces.items()}

    def action_space(self, agent):
        self._require_started()
        return self._spaces[agent][0]

    def observation_space(self, agent):
        self._require_started()
        return self._spaces[agent][1]

    def render(self, width=72):
        """Text (render_mode "ansi"): while the episode runs, one line on
        the pending decision; once it has ended, that line and the text
        Gantt chart of its machines (gantt.py), from its trace."""
        d = self._session.decision
        if d is None:
            head = f"episode {self._session.id}: ended ({(self._session.metrics or {}).get('status', '')})"
            if self._session.id is None or self._session.metrics is None:
                return head
            trace = self.client.artifact(self._session.id, "trace.jsonl")
            return head + "\n" + gantt.text_gantt(trace.splitlines(), width)
        parts = [f"{a}:{v['kind']}[{len(v['legal_actions'])}]" for a, v in sorted(d["active_agents"].items())]
        return f"step {d['step']} t={d['time']:.2f} " + " ".join(parts)

    def close(self):
        """Close and free the episode on the server."""
        self._close_episode()

    def state(self):
        """The pending Decision (payload.md), None once ended."""
        return self._session.decision

    # -- extras ---------------------------------------------------------
    @property
    def episode_id(self):
        return self._session.id

    @property
    def metrics(self):
        """metrics.json of the ended episode, None before the end."""
        return self._session.metrics

    @property
    def layout(self):
        return self._session.layout

    @property
    def offer(self):
        """The mode ids of the mode selector's options, in option order
        (the episode status's "offer"); empty for a paradigm without one."""
        return list(self._session.offer)

    def _close_episode(self):
        if self._session.id is not None:
            eid, self._session.id = self._session.id, None
            self._session.agents, self._session.decision = [], None
            self.client.batch_delete([eid])

    def _make_spaces(self, seed):
        s = self._session
        self._spaces = {}
        for i, a in enumerate(s.possible_agents):
            act = spaces.Discrete(s.action_count(a), None if seed is None else seed * 1009 + i)
            obs = spaces.Dict({"vector": spaces.Box(s.vector_length(a)), "payload": None})
            self._spaces[a] = (act, obs)

    def _require_started(self):
        """Before the first reset, learn the agents and spaces from the
        server: create an episode and free it at once (its seed is not
        drawn from the seed generator, so the episodes reset plays are
        the same with or without this)."""
        s = self._session
        if s.started:
            return
        (res,) = self.client.batch_create([s.create_item(self._seed)])
        try:
            s.learn(res)
        finally:
            if res.get("code") == 201:
                self.client.batch_delete([res["id"]])
        self._make_spaces(self._seed)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def parallel_env(**kwargs):
    """ParallelEnv(**kwargs): base_url, token, instance, paradigm, seed,
    reward, use_numpy, render_mode, play, others."""
    return ParallelEnv(**kwargs)
