"""A Gymnasium-shaped single-agent environment for the centralized
paradigm, where the plant makes every decision (without importing
Gymnasium)."""

from .parallel import ParallelEnv


class GymEnv:
    """reset(seed) -> (obs, info); step(action) -> (obs, reward,
    terminated, truncated, info). obs is the plant's {"vector", "payload"}
    and info["action_mask"] its mask; at the end info["metrics"] holds the
    15 metrics."""

    metadata = ParallelEnv.metadata

    def __init__(self, paradigm="centralized", **kwargs):
        self._env = ParallelEnv(paradigm=paradigm, **kwargs)
        self.agent = "plant"

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
            raise ValueError(f"gym_env needs a paradigm where only the plant decides; "
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
    """GymEnv(**kwargs): base_url, token, instance, seed, reward, use_numpy
    (paradigm defaults to centralized, the only built-in one it accepts)."""
    return GymEnv(**kwargs)
