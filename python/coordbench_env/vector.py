"""n parallel environments stepped through the batched endpoints: one
HTTP request per call, whatever n."""

from .client import Client, ItemError
from .reward import Reward
from .seeding import SeedStream
from .session import Session


class VectorEnv:
    """n copies of ParallelEnv over one server, stepped together.

    reset(seed) -> (list of observations, list of infos), sub-environment i
    seeded seed + i (or the constructor's seeds). step(list of action
    dicts) -> five lists, one entry per sub-environment, each as
    ParallelEnv.step returns it. A sub-environment that has ended stays
    ended (its agents empty, its entries empty dicts) until the next
    reset(); ``done`` lists which have ended. With autoreset=True it
    starts anew instead, in Gymnasium's next-step mode: the step after
    the one that ended it ignores its actions and returns its new
    episode's first observations (zero rewards, no termination), on a
    fresh training seed drawn from its generator (infos name it). n is bounded by the server's
    --max-batch. play and others are ParallelEnv's.
    """

    def __init__(self, n, base_url="http://127.0.0.1:8765", token=None, instance="A3C9-1", paradigm="centralized",
                 seed=None, reward=None, client=None, use_numpy=None, play=None, others=None, autoreset=False):
        if n < 1:
            raise ValueError("n must be at least 1")
        self.num_envs = n
        self.client = client or Client(base_url, token)
        self._seed = seed
        self.sessions = [Session(instance, paradigm, Reward(reward), use_numpy, play, others) for _ in range(n)]
        self._streams = [SeedStream() for _ in range(n)]
        self.autoreset = bool(autoreset)

    @property
    def agents(self):
        return [list(s.agents) for s in self.sessions]

    @property
    def done(self):
        return [s.decision is None for s in self.sessions]

    @property
    def metrics(self):
        return [s.metrics for s in self.sessions]

    @property
    def offer(self):
        """The episode's modes offered to a mode selector (as
        SocketVectorEnv.offer); known once the first reset has talked to
        the server."""
        return list(self.sessions[0].offer or ())

    def reset(self, seed=None, seeds=None):
        """Start n new episodes (closing the previous ones): environment i
        plays seed + i (on the first reset, else the constructor's seed +
        i), or seeds[i] when seeds (a list of n) is given; each seed also
        seeds environment i's generator. Without a seed, environment i
        plays a fresh training seed drawn from its generator (Gymnasium's
        way; docs/python-env.md, "Seeding")."""
        if seeds is not None:
            seeds = list(seeds)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} environments")
        else:
            if seed is None and not any(s.started for s in self.sessions):
                seed = self._seed
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        seeds = [st.next(sd) for st, sd in zip(self._streams, seeds)]
        self.close()
        out = self._create(range(self.num_envs), seeds)
        return [o for o, _ in out], [i for _, i in out]

    def _create(self, which, seeds):
        """Create episodes in the sub-environments which (seeds[k] for the
        k-th), in one request; their (observations, infos), in order."""
        which = list(which)
        results = self.client.batch_create([self.sessions[i].create_item(sd) for i, sd in zip(which, seeds)])
        out, failed = {}, None
        todo = []
        for i, r in zip(which, results):
            s = self.sessions[i]
            try:
                out[i] = s.on_created(r)
            except ItemError as err:
                failed = failed or err
                continue
            if out[i] is None:  # no decision within the server's long-poll
                todo.append(i)
        while todo and failed is None:
            results = self.client.batch_step([self.sessions[i].peek_item() for i in todo])
            again = []
            for i, r in zip(todo, results):
                try:
                    out[i] = self.sessions[i].on_ready(r)
                except ItemError as err:
                    failed = failed or err
                    continue
                if out[i] is None:
                    again.append(i)
            todo = again
        if failed is not None:  # free what was created, then say why
            self.close()
            raise failed
        return [out[i] for i in which]

    def step(self, actions):
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} action dicts for {self.num_envs} environments")
        outs = [({}, {}, {}, {}, {}) for _ in self.sessions]
        if self.autoreset:  # Gymnasium's next-step mode: an episode that ended last step starts anew
            ended = [i for i, s in enumerate(self.sessions) if s.id is not None and s.decision is None]
            if ended:
                self.client.batch_delete([self.sessions[i].id for i in ended])
                for i in ended:
                    self.sessions[i].id = None
                fresh = self._create(ended, [self._streams[i].next() for i in ended])
                for i, (o, inf) in zip(ended, fresh):
                    agents = list(o)
                    outs[i] = (o, {a: 0.0 for a in agents}, {a: False for a in agents}, {a: False for a in agents}, inf)
        todo = [(i, s.step_item(a)) for i, (s, a) in enumerate(zip(self.sessions, actions))
                if s.decision is not None and not outs[i][0]]
        failed = None
        while todo:
            results = self.client.batch_step([it for _, it in todo])
            again = []
            # Every result is taken, even after one item failed: the other
            # episodes did step, and must move on to their new decisions.
            for (i, _), r in zip(todo, results):
                try:
                    o = self.sessions[i].on_stepped(r)
                except ItemError as err:
                    failed = failed or err
                    continue
                if o is None:
                    again.append((i, self.sessions[i].peek_item()))
                else:
                    outs[i] = o
            todo = again
        if failed is not None:
            raise failed
        return tuple([o[k] for o in outs] for k in range(5))

    def close(self):
        ids = [s.id for s in self.sessions if s.id is not None]
        for s in self.sessions:
            s.id, s.agents, s.decision = None, [], None
        if ids:
            self.client.batch_delete(ids)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def vector_env(n, socket=None, **kwargs):
    """VectorEnv(n, **kwargs): n environments stepped in one request; with
    socket=PATH, the same over the unix socket of ``coordbench des
    serve-socket`` (socket_env.SocketVectorEnv, the fast local transport)."""
    if socket is not None:
        from .socket_env import SocketVectorEnv
        return SocketVectorEnv(n, socket=socket, **kwargs)
    return VectorEnv(n, **kwargs)
