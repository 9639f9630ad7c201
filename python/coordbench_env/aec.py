"""The PettingZoo AEC (agent-environment cycle) shape over ParallelEnv,
for learners that need one active agent per step (without importing
PettingZoo).

Only agents with a pending decision get turns: the active agents of a
decision take theirs one at a time, in sorted order, and the decision is
sent to the server once the last of them has acted. When the episode
ends, every agent is terminated (or truncated) together and must then be
stepped once with None, as PettingZoo's AEC API requires, which removes
it from ``agents``.
"""

from .parallel import ParallelEnv


class AECEnv:
    """reset(seed) -> None; agent_selection is the agent to act;
    last() -> (observation, cumulative reward, termination, truncation,
    info) of it; step(action) acts for it. observe(agent), rewards,
    terminations, truncations, infos and agent_iter() as in PettingZoo.
    The keyword arguments are ParallelEnv's."""

    metadata = ParallelEnv.metadata

    def __init__(self, **kwargs):
        self._par = ParallelEnv(**kwargs)
        self._reset_state()

    def _reset_state(self):
        self.agents = []
        self.rewards, self._cumulative_rewards = {}, {}
        self.terminations, self.truncations, self.infos = {}, {}, {}
        self._obs, self._queue, self._pending = {}, [], {}
        self.agent_selection = None

    @property
    def unwrapped(self):
        return self

    @property
    def parallel_env(self):
        return self._par

    @property
    def possible_agents(self):
        return self._par.possible_agents

    @property
    def max_num_agents(self):
        return self._par.max_num_agents

    @property
    def num_agents(self):
        return len(self.agents)

    def action_space(self, agent):
        return self._par.action_space(agent)

    def observation_space(self, agent):
        return self._par.observation_space(agent)

    def reset(self, seed=None, options=None):
        obs, infos = self._par.reset(seed=seed, options=options)
        self._reset_state()
        self.agents = list(self._par.agents)
        self._obs, self.infos = obs, infos
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._next_turns()

    def _next_turns(self):
        self._queue = sorted(a for a in self.agents if self.infos[a].get("active"))
        self._pending = {}
        self.agent_selection = self._queue[0] if self._queue else (self.agents[0] if self.agents else None)

    def observe(self, agent):
        return self._obs.get(agent)

    def last(self, observe=True):
        a = self.agent_selection
        return (self.observe(a) if observe else None, self._cumulative_rewards[a], self.terminations[a],
                self.truncations[a], self.infos[a])

    def step(self, action):
        a = self.agent_selection
        if a is None:
            raise RuntimeError("no agent to step: call reset()")
        if self.terminations[a] or self.truncations[a]:
            if action is not None:
                raise ValueError(f"{a} is done: step it with None")
            self.agents.remove(a)
            for d in (self.rewards, self._cumulative_rewards, self.terminations, self.truncations, self.infos):
                d.pop(a, None)
            self.agent_selection = self.agents[0] if self.agents else None
            return
        self._cumulative_rewards[a] = 0.0  # its reward so far was seen in last()
        self._pending[a] = action
        self._queue.pop(0)
        if self._queue:
            self.agent_selection = self._queue[0]
            return
        obs, rew, term, trunc, infos = self._par.step(self._pending)
        self._obs, self.infos = obs, infos
        for b in self.agents:
            self.rewards[b] = rew[b]
            self._cumulative_rewards[b] += rew[b]
            self.terminations[b], self.truncations[b] = term[b], trunc[b]
        self._next_turns()

    def agent_iter(self, max_iter=1 << 63):
        """The agents to act, one per step, until every agent is gone."""
        n = 0
        while self.agents and n < max_iter:
            yield self.agent_selection
            n += 1

    def render(self):
        return self._par.render()

    def close(self):
        self._par.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def aec_env(**kwargs):
    """AECEnv(**kwargs): ParallelEnv's arguments, one agent per step."""
    return AECEnv(**kwargs)
