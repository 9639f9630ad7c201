"""A Gymnasium-shaped single-agent environment for the centralized
paradigm, where the plant makes every decision (without importing
Gymnasium)."""

from .parallel import ParallelEnv


class GymEnv:
    """reset(seed) -> (obs, info); step(action) -> (obs, reward,
    terminated, truncated, info). obs is the agent's {"vector", "payload"}
    and info["action_mask"] its mask; at the end info["metrics"] holds the
    15 metrics. The agent is the plant, or the one agent of play (e.g.
    play=["mode_selector"], paradigm="adaptive_agent": the server's
    built-in controller answers every other agent)."""

    metadata = ParallelEnv.metadata

    def __init__(self, paradigm="centralized", play=None, **kwargs):
        if play is not None and (isinstance(play, str) or len(play) != 1):
            raise ValueError(f"gym_env plays one agent: play must list exactly one, got {play!r}")
        self._env = ParallelEnv(paradigm=paradigm, play=play, **kwargs)
        self.agent = play[0] if play else "plant"

    @property
    def unwrapped(self):
        return self

    @property
    def parallel_env(self):
        return self._env

    @property
    def action_space(self):
        return self._env.action_space(self.agent)

    @property
    def observation_space(self):
        return self._env.observation_space(self.agent)

    def reset(self, seed=None, options=None):
        obs, infos = self._env.reset(seed=seed, options=options)
        if self._env.possible_agents != [self.agent]:
            agents = self._env.possible_agents
            self._env.close()
            raise ValueError(f"gym_env needs a paradigm where only {self.agent} decides (or play=[agent]); "
                             f"{self._env._session.paradigm} has agents {agents}")
        return obs[self.agent], infos[self.agent]

    def step(self, action):
        obs, rew, term, trunc, infos = self._env.step({self.agent: action})
        a = self.agent
        return obs[a], rew[a], term[a], trunc[a], infos[a]

    def render(self):
        return self._env.render()

    def close(self):
        self._env.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def gym_env(**kwargs):
    """GymEnv(**kwargs): base_url, token, instance, seed, reward, use_numpy,
    paradigm (default centralized, the only built-in one where the plant
    decides alone), play (one agent) and others."""
    return GymEnv(**kwargs)
