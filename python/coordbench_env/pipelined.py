"""A vector environment stepped in groups, pipelined: while the server
steps one group's episodes, the learner's policy works on another's, so
that the learner's process and the server run at the same time instead of
taking turns (EnvPool's asynchronous mode, in a fixed round-robin order).

    with pipelined_env(32, groups=2, socket=PATH, seed=1) as p:
        p.async_reset()
        while training:
            g, arr = p.recv()           # the next group's StepArrays
            p.send(policy(arr))         # its actions, as for step_arrays

Group g holds the environments p.offsets[g] ... p.offsets[g] + p.group_size - 1
of a vector_env(n) with the same seed: their episodes, seeds (auto-reset
included), observations, masks and rewards are the same as that vector
environment's under the same actions, whatever the groups (tested).
Standard library only.
"""

from .socket_env import SocketVectorEnv


class PipelinedVectorEnv:
    """n episodes over the socket transport in `groups` sessions of
    n / groups each, auto-reset on; see the module comment. Every keyword
    argument but n and groups is SocketVectorEnv's (autoreset is always on:
    a pipelined learner never waits for a group to be reset)."""

    def __init__(self, n, groups=2, socket=None, seed=None, **kw):
        if groups < 1 or n % groups:
            raise ValueError(f"groups must divide n: {n} environments in {groups} groups")
        if kw.pop("autoreset", True) is not True:
            raise ValueError("a pipelined vector environment always auto-resets")
        self.num_envs, self.groups, self.group_size = n, groups, n // groups
        self.offsets = [g * self.group_size for g in range(groups)]
        self.envs = []
        try:
            for off in self.offsets:
                self.envs.append(SocketVectorEnv(self.group_size, socket=socket, autoreset=True,
                                                 seed=None if seed is None else seed + off, **kw))
        except BaseException:
            self._close_all()
            raise
        e = self.envs[0]
        self.possible_agents = e.possible_agents
        self.action_count, self.vector_length = e.action_count, e.vector_length
        self.obs_stride, self.mask_stride = e.obs_stride, e.mask_stride
        self.obs_offset, self.mask_offset = e.obs_offset, e.mask_offset
        self._next = 0  # the group recv returns next
        self._sent = [False] * groups
        self._last = None  # the group recv returned last, whose actions send takes

    @property
    def shared_memory(self):
        return all(e.shared_memory for e in self.envs)

    def async_reset(self, seed=None):
        """Start a new episode in every environment (seed as in
        vector_env.reset: environment i gets seed + i) without waiting;
        recv returns the groups' first StepArrays in turn."""
        for g, e in enumerate(self.envs):
            if self._sent[g]:  # a request is outstanding: read its reply first
                e.recv_arrays()
            e.send_reset(None if seed is None else seed + self.offsets[g])
            self._sent[g] = True
        self._next, self._last = 0, None

    def recv(self):
        """(g, StepArrays) of the next group in turn (0, 1, …, groups−1,
        0, …), waiting for its reply; valid until that group's next send."""
        g = self._next
        if not self._sent[g]:
            raise RuntimeError("recv before async_reset, or twice without send")
        arr = self.envs[g].recv_arrays()
        self._sent[g] = False
        self._last, self._next = g, (g + 1) % self.groups
        return g, arr

    def send(self, actions):
        """The actions of the group recv returned last (group_size * A
        integers, as for step_arrays); the server steps it at once."""
        g = self._last
        if g is None:
            raise RuntimeError("send before recv")
        self.envs[g].send_arrays(actions)
        self._sent[g], self._last = True, None

    def close(self):
        """Close every group's connection; the server ends their episodes
        (a reply still on its way is not waited for)."""
        self._close_all()
        self._sent = [False] * self.groups

    def _close_all(self):
        for e in self.envs:
            e.client.close()
            e._unmap()
        self.envs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def pipelined_env(n, groups=2, **kw):
    """A PipelinedVectorEnv of n episodes in `groups` groups over the unix
    socket of ``coordbench des serve-socket`` (socket=PATH)."""
    return PipelinedVectorEnv(n, groups=groups, **kw)
