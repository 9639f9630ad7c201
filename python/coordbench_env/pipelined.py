"""A vector environment stepped in groups, pipelined: while the server
steps one group's episodes, the learner's policy works on another's, so
that the learner's process and the server run at the same time instead of
taking turns (EnvPool's asynchronous mode, in a fixed round-robin order).

    with pipelined_env(32, groups=2, socket=PATH, seed=1) as p:
        p.async_reset()
        while training:
            g, arr = p.recv()           # the next group's StepArrays
            p.send(policy(arr))         # its actions, as for step_arrays

The n episodes are one session of the server, over one connection; each
request steps one group and skips the others (the protocol's skip
command), and the requests are pipelined: the next group's request is
already waiting when the server has answered one, so it never parks.
Group g holds the environments p.offsets[g] ... p.offsets[g] + p.group_size - 1
of a vector_env(n) with the same seed: their episodes, seeds (auto-reset
included), observations, masks and rewards are the same as that vector
environment's under the same actions, whatever the groups (tested); a
group's StepArrays (StepArrays.part) number its environments from 0,
tail entries included. Standard library only.
"""

from .socket_env import CMD_RESET, SocketVectorEnv


class PipelinedVectorEnv:
    """n episodes over the socket transport in `groups` groups of
    n / groups, auto-reset on; see the module comment. Every keyword
    argument but n and groups is SocketVectorEnv's (autoreset is always on:
    a pipelined learner never waits for a group to be reset)."""

    def __init__(self, n, groups=2, socket=None, seed=None, **kw):
        if groups < 1 or n % groups:
            raise ValueError(f"groups must divide n: {n} environments in {groups} groups")
        if kw.pop("autoreset", True) is not True:
            raise ValueError("a pipelined vector environment always auto-resets")
        self.num_envs, self.groups, self.group_size = n, groups, n // groups
        self.offsets = [g * self.group_size for g in range(groups)]
        self.env = SocketVectorEnv(n, socket=socket, autoreset=True, seed=seed, **kw)
        e = self.env
        self.possible_agents = e.possible_agents
        self.action_count, self.vector_length = e.action_count, e.vector_length
        self.obs_stride, self.mask_stride = e.obs_stride, e.mask_stride
        self.obs_offset, self.mask_offset = e.obs_offset, e.mask_offset
        self._next = 0  # the group recv returns next
        self._sent = [False] * groups  # a request of the group awaits its reply
        self._last = None  # the group recv returned last, whose actions send takes
        self._closed = False

    @property
    def shared_memory(self):
        return self.env.shared_memory

    @property
    def client(self):
        """The session's SocketClient."""
        return self.env.client

    def _range(self, g):
        return self.offsets[g], self.offsets[g] + self.group_size

    def async_reset(self, seed=None):
        """Start a new episode in every environment (seed as in
        vector_env.reset: environment i gets seed + i) without waiting;
        recv returns the groups' first StepArrays in turn."""
        self._check_open()
        e = self.env
        for g in range(self.groups):  # replies still on their way are read first, in order
            if self._sent[(self._next + g) % self.groups]:
                e._recv_full()
        self._sent = [False] * self.groups
        for i, sd in enumerate(e._reset_seeds(seed, None)):
            e._seeds[i] = sd
        for g in range(self.groups):
            lo, hi = self._range(g)
            e._send_part(lo, hi, bytes([CMD_RESET]) * self.group_size)
            self._sent[g] = True
        self._next, self._last = 0, None

    def recv(self):
        """(g, StepArrays) of the next group in turn (0, 1, …, groups−1,
        0, …), waiting for its reply; valid until that group's next send."""
        self._check_open()
        g = self._next
        if not self._sent[g]:
            raise RuntimeError("recv before async_reset, or twice without send")
        arr = self.env._recv_part(*self._range(g))
        self._sent[g] = False
        self._last, self._next = g, (g + 1) % self.groups
        return g, arr

    def send(self, actions):
        """The actions of the group recv returned last (group_size * A
        integers, as for step_arrays); the server steps it at once."""
        self._check_open()
        g = self._last
        if g is None:
            raise RuntimeError("send before recv")
        lo, hi = self._range(g)
        self.env._send_part_arrays(lo, hi, actions)
        self._sent[g], self._last = True, None

    def close(self):
        """Close the connection; the server ends the episodes (replies still
        on their way are not waited for)."""
        if not self._closed:
            self._closed = True
            self.env.client.close()
            self.env._unmap()
        self._sent = [False] * self.groups

    def _check_open(self):
        if self._closed:
            raise RuntimeError("the pipelined environment is closed")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def pipelined_env(n, groups=2, **kw):
    """A PipelinedVectorEnv of n episodes in `groups` groups over the unix
    socket of ``coordbench des serve-socket`` (socket=PATH)."""
    return PipelinedVectorEnv(n, groups=groups, **kw)
