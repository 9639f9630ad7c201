"""The socket transport: n episodes stepped by one binary request over the
unix socket of ``coordbench des serve-socket`` (package des/envsock; the
protocol is in its package comment).

The server computes the observation vectors, masks, rewards (for
weights; a callable reward runs here) and ends, and sends them as flat
little-endian arrays, so nothing is parsed per step but a short JSON tail
when an episode ends or an action falls back. Two ways to step:

- ``SocketVectorEnv.step(list_of_action_dicts)``: VectorEnv's API and
  results (lists of PettingZoo-shaped dicts), the same observations,
  masks, rewards, infos and seeds as over HTTP;
- ``SocketVectorEnv.step_arrays(actions)``: flat arrays in, flat arrays out
  (``StepArrays``), for a learner that batches its policy: the fast path.

Standard library only.
"""

import array
import json
import mmap
import os
import select
import socket as _socket
import struct
import sys
import time

from .client import ItemError, ServerError
from .features import KINDS
from .reward import Reward
from .seeding import SeedStream
from .session import PRIMARY_METRICS, TERMINAL_STATUSES, numpy_available

try:  # optional: arrays beside the lists
    import numpy as _np
except ImportError:  # pragma: no cover - NumPy is never required
    _np = None

OP_OPEN, OP_STEP, OP_CLOSE, OP_BENCH, OP_CPU = 1, 2, 3, 4, 5
CMD_NONE, CMD_ACT, CMD_RESET, CMD_SKIP = 0, 1, 2, 3
STATE_PENDING, STATE_ENDED, STATE_IDLE = 0, 1, 2
NO_ACTION = -(1 << 31)  # "no action": the agent falls back
MAX_REPLY = 256 << 20  # bound on what the client reads of one reply
SPIN = 200e-6  # seconds a client polls for a reply before it sleeps (SocketClient's spin)

if sys.byteorder != "little":  # pragma: no cover
    raise ImportError("coordbench_env.socket_env needs a little-endian machine (the wire format is little-endian)")


# Shared memory needs descriptors passed over the socket (SCM_RIGHTS).
SHARED_MEMORY_AVAILABLE = hasattr(_socket.socket, "recvmsg_into") and hasattr(_socket, "SCM_RIGHTS")


def _map_shared(fds, size, error, required):
    """Map the shared region whose descriptor came with the reply to the
    open request (None when the server did not grant it)."""
    try:
        if not fds or size <= 0:
            if required:
                raise ServerError(0, "the server did not share memory: " + (error or "no descriptor came"), "")
            return None
        return mmap.mmap(fds[0], size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    finally:
        while fds:  # the mapping keeps the region; the list is left empty
            os.close(fds.pop())


def _reply_json(body, what, path):
    """A reply body that must be a JSON object; a ServerError otherwise (a
    server that is not des serve-socket, or a broken one)."""
    try:
        out = json.loads(bytes(body))
    except ValueError as err:
        raise ServerError(0, f"the reply to {what} is not JSON ({err})", path) from None
    if not isinstance(out, dict):
        raise ServerError(0, f"the reply to {what} is not a JSON object", path)
    return out


class SocketClient:
    """One connection (one session) to ``coordbench des serve-socket``.

    Requests may be pipelined: send the next before reading a reply (recv
    reads the replies in order). A reply not yet there is polled for up to
    spin seconds before the client sleeps until it comes (0: sleep at
    once): waking a sleeping process costs the server more than the reply
    itself, so a learner that waits for the server a few microseconds at a
    time steps faster spinning. timeout bounds every wait."""

    def __init__(self, path, timeout=600.0, spin=SPIN):
        if not isinstance(path, str) or not path:
            raise ValueError(f"socket must be the path of the server's unix socket, got {path!r}")
        if not spin >= 0:
            raise ValueError(f"spin must be a number of seconds, at least 0, got {spin!r}")
        self.path, self.timeout, self.spin = path, timeout, spin
        self._sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(path)
        except OSError as err:
            self._sock.close()
            raise ConnectionError(f"cannot connect to the socket server at {path}: {err} "
                                  f"(start it with: coordbench des serve-socket --socket {path})") from None
        self._sock.setblocking(False)  # waits are the client's own (_wait), never a poll per call
        self._buf = bytearray(1 << 16)
        self._extra = (0, 0)  # bytes read past the last reply (the next replies' first bytes): _buf[lo:hi]
        self.broken = False  # a reply was left half read: no further request

    def __repr__(self):
        return f"SocketClient({self.path!r})"

    def call(self, op, *parts):
        """Send one request (op and the body's parts) and return the reply
        body as a memoryview of the client's buffer, valid until the next
        call. Raises ServerError when the server refuses it."""
        self.send(op, *parts)
        return self.recv()

    def send(self, op, *parts):
        """Send one request without waiting for its reply (recv reads it):
        a pipelined client works meanwhile."""
        if self.broken:
            raise ConnectionError(f"socket server at {self.path}: the connection was left mid-reply "
                                  "(an interrupted read); open a new one")
        size = 1 + sum(memoryview(p).nbytes for p in parts)
        bufs = [struct.pack("<IB", size, op), *parts]
        try:
            try:
                sent = self._sock.sendmsg(bufs)
            except BlockingIOError:
                sent = 0
            if sent < 4 + size:  # a short write: send the rest as the socket takes it
                rest = memoryview(b"".join(bytes(memoryview(b).cast("B")) for b in bufs)[sent:])
                while rest:
                    self._wait(write=True)
                    try:
                        rest = rest[self._sock.send(rest):]
                    except BlockingIOError:
                        pass
        except OSError as err:
            raise ConnectionError(f"socket server at {self.path}: {err}") from None

    def recv(self, fds=None):
        """Read the reply to the oldest request not yet answered and return
        its body (a memoryview of the client's buffer, valid until the next
        recv). With fds a list, descriptors passed with the reply
        (SCM_RIGHTS) are appended to it. A read cut short by anything (an
        error, a KeyboardInterrupt) leaves the client broken: its stream is
        no longer in step with the server's frames."""
        try:
            status, body = self._recv(fds)
        except BaseException:
            self.broken = True
            raise
        if status != 0:  # a refusal is a whole frame: the stream stays in step
            raise ServerError(400, bytes(body).decode("utf-8", "replace"), self.path)
        return body

    def _recv(self, fds):
        try:
            lo, hi = self._extra
            got = hi - lo
            if got:  # the start of this reply came with the last one
                self._buf[:got] = self._buf[lo:hi]
            buf = memoryview(self._buf)
            while got < 8:
                got += self._recv_some(buf[got:], fds)
            n, status = struct.unpack_from("<IB", self._buf)
            if n > MAX_REPLY:
                raise ServerError(0, f"a reply of {n} bytes, more than {MAX_REPLY}", self.path)
            if 8 + n > len(self._buf):  # a larger buffer: keep what came
                grown = bytearray(8 + n)
                grown[:got] = self._buf[:got]
                self._buf = grown
                buf = memoryview(self._buf)
            while got < 8 + n:
                got += self._recv_some(buf[got:], fds)
            self._extra = (8 + n, got)
            body = buf[8:8 + n]
        except OSError as err:
            raise ConnectionError(f"socket server at {self.path}: {err}") from None
        return status, body

    def _recv_some(self, view, fds):
        """Read what has come into view (at least a byte), polling for up
        to spin seconds, then sleeping until something comes."""
        try:
            return self._recv_now(view, fds)
        except BlockingIOError:
            pass
        if self.spin > 0:
            clock = time.perf_counter
            until = clock() + self.spin
            while clock() < until:
                try:
                    return self._recv_now(view, fds)
                except BlockingIOError:
                    pass
        while True:
            self._wait()
            try:
                return self._recv_now(view, fds)
            except BlockingIOError:  # woken for nothing: wait again
                pass

    def _recv_now(self, view, fds):
        if fds is None:
            k = self._sock.recv_into(view)
        else:
            k, anc, _, _ = self._sock.recvmsg_into([view], _socket.CMSG_SPACE(4 * 4))
            for level, kind, data in anc:
                if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                    data = data[:len(data) - len(data) % 4]
                    fds.extend(array.array("i", data))
        if k == 0:
            raise ConnectionError("the server closed the connection")  # _recv names the server
        return k

    def _wait(self, write=False):
        """Sleep until the socket can be read (or written), at most timeout
        seconds."""
        s = self._sock
        if hasattr(select, "poll"):  # no bound on descriptor numbers, unlike select
            p = select.poll()
            p.register(s, select.POLLOUT if write else select.POLLIN)
            ready = p.poll(None if self.timeout is None else self.timeout * 1000)
        else:  # pragma: no cover - platforms without poll
            r, w, _ = select.select(() if write else (s,), (s,) if write else (), (), self.timeout)
            ready = r or w
        if not ready:
            raise TimeoutError(f"no reply within {self.timeout} s")

    def call_json(self, op, obj):
        return _reply_json(self.call(op, json.dumps(obj).encode()), f"op {op}", self.path)

    def bench(self, instance, paradigm, seeds, trace=False):
        """Play the episodes of seeds in the server's process, every agent
        taking its first legal action, with no transport (and the trace to
        memory when trace is set, as des bench does): {"episodes",
        "decisions", "nanos", "cpu_nanos"}."""
        return self.call_json(OP_BENCH, {"instance": instance, "paradigm": paradigm,
                                         "seeds": [int(s) for s in seeds], "trace": bool(trace)})

    def cpu(self):
        """The CPU time the server process has used, in nanoseconds (-1:
        unknown)."""
        return _reply_json(self.call(OP_CPU), "cpu", self.path).get("cpu_nanos", -1)

    def close(self):
        self._sock.close()


class StepArrays:
    """One step's reply as flat arrays (memoryviews of the client's buffer:
    valid until the next request; copy what you keep). For n environments
    and agents ``possible_agents`` (A of them), the vector of agent a of
    environment i is ``obs[i*obs_stride + obs_offset[a]:][:vector_length[a]]``
    and its mask ``mask[i*mask_stride + mask_offset[a]:][:action_count[a]]``:

    time, reward, tardiness (float64, n); obs (float64, n*obs_stride);
    seed (uint64, n); step, completed, released (int32, n); state (uint8,
    n: 0 a decision is pending, 1 the episode ended at this step, 2 nothing
    happened); terminated, truncated (uint8, n); active (uint8, n*A); mask
    (uint8, n*mask_stride); tail: a dict with "ended" (status, metrics),
    "problems", "payloads", "errors", each entry tagged "env"."""

    __slots__ = ("time", "reward", "tardiness", "obs", "seed", "step", "completed", "released", "state",
                 "terminated", "truncated", "active", "mask", "tail", "shape")

    def __init__(self, fixed, n, a, lv, m, tail=None):
        self.shape = (n, a, lv, m)
        off = 0

        def take(size, fmt):
            nonlocal off
            v = fixed[off:off + size]
            off += size
            return v.cast(fmt) if fmt != "B" else v

        self.time, self.reward, self.tardiness = take(8 * n, "d"), take(8 * n, "d"), take(8 * n, "d")
        self.obs = take(8 * n * lv, "d")
        self.seed = take(8 * n, "Q")
        self.step, self.completed, self.released = take(4 * n, "i"), take(4 * n, "i"), take(4 * n, "i")
        self.state, self.terminated, self.truncated = take(n, "B"), take(n, "B"), take(n, "B")
        self.active, self.mask = take(n * a, "B"), take(n * m, "B")
        self.tail = {}
        if tail is not None:
            self._read_tail(tail)

    def numpy(self):
        """The arrays as NumPy arrays without a copy (views of the same
        memory, read-only with shared memory: valid until the next step),
        shaped by environment: time, reward, tardiness (float64, n); obs
        (float64, n × obs_stride); seed (uint64, n); step, completed,
        released (int32, n); state, terminated, truncated (uint8, n);
        active (bool, n × A); mask (bool, n × mask_stride). A dict; needs
        NumPy."""
        if _np is None:
            raise ImportError("StepArrays.numpy needs NumPy")
        n, a, lv, m = self.shape
        f = _np.frombuffer
        return {"time": f(self.time, _np.float64), "reward": f(self.reward, _np.float64),
                "tardiness": f(self.tardiness, _np.float64), "obs": f(self.obs, _np.float64).reshape(n, lv),
                "seed": f(self.seed, _np.uint64), "step": f(self.step, _np.int32),
                "completed": f(self.completed, _np.int32), "released": f(self.released, _np.int32),
                "state": f(self.state, _np.uint8), "terminated": f(self.terminated, _np.uint8),
                "truncated": f(self.truncated, _np.uint8),
                "active": f(self.active, _np.uint8).view(_np.bool_).reshape(n, a),
                "mask": f(self.mask, _np.uint8).view(_np.bool_).reshape(n, m)}

    def part(self, lo, hi):
        """Environments lo … hi−1 as a StepArrays of their own: views of the
        same memory, and the tail's entries of those environments with
        "env" counted from lo (a pipelined group's arrays)."""
        n, a, lv, m = self.shape
        if not 0 <= lo < hi <= n:
            raise ValueError(f"environments {lo} to {hi - 1} of {n}")
        p = StepArrays.__new__(StepArrays)
        p.shape = (hi - lo, a, lv, m)
        for name in ("time", "reward", "tardiness", "seed", "step", "completed", "released", "state",
                     "terminated", "truncated"):
            setattr(p, name, getattr(self, name)[lo:hi])
        p.obs, p.active, p.mask = self.obs[lo * lv:hi * lv], self.active[lo * a:hi * a], self.mask[lo * m:hi * m]
        p.tail = _part_tail(self.tail, lo, hi)
        return p

    @staticmethod
    def size(n, a, lv, m):
        """The bytes of the fixed part of a reply (all but the tail)."""
        return 8 * n * 4 + 8 * n * lv + 4 * n * 3 + 3 * n + n * a + n * m

    def _read_tail(self, view):
        """Read the tail (a uint32 length and the JSON) from view."""
        if len(view) < 4:
            raise ServerError(0, f"a step reply cut short ({len(view)} bytes of tail)", "")
        (k,) = struct.unpack_from("<I", view)
        if 4 + k > len(view):
            raise ServerError(0, f"a step reply's tail of {k} bytes in {len(view) - 4}", "")
        self.tail = json.loads(bytes(view[4:4 + k])) if k else {}


def _part_tail(tail, lo, hi):
    """The entries of a step's tail about environments lo … hi−1, "env"
    counted from lo."""
    if not tail:
        return {}
    out = {}
    for key, entries in tail.items():
        if isinstance(entries, list):
            kept = [dict(e, env=e["env"] - lo) for e in entries
                    if isinstance(e, dict) and isinstance(e.get("env"), int) and lo <= e["env"] < hi]
            if kept:
                out[key] = kept
    return out


class SocketVectorEnv:
    """VectorEnv over the socket transport: the same constructor (socket
    in place of base_url and token), reset, step, done, agents, metrics and
    close, and the same results; plus reset_arrays and step_arrays, the
    flat fast path. payloads=True also fetches each decision's payload
    (observations[agent]["payload"]), as over HTTP; without it (the
    default, and much faster) the payload is None. play and others play
    some agents only, as over HTTP: the arrays hold those agents (A =
    len(possible_agents)), the server answers the rest. spin is the
    client's (SocketClient): how long it polls for a reply before it
    sleeps."""

    def __init__(self, n, socket=None, instance="A3C9-1", paradigm="centralized", seed=None, reward=None,
                 use_numpy=None, play=None, others=None, autoreset=False, payloads=False, client=None,
                 shared_memory=None, spin=SPIN):
        if n < 1:
            raise ValueError("n must be at least 1")
        if isinstance(play, str):
            raise TypeError("play must be a list of agent ids, not a string")
        if others is not None and play is None:
            raise ValueError("others names who answers the agents the client does not play: give play too")
        self.num_envs = n
        self.reward = Reward(reward)
        self.autoreset = bool(autoreset)
        self.payloads = bool(payloads)
        self.use_numpy = numpy_available() if use_numpy is None else bool(use_numpy and _np is not None)
        own = client is None
        self.client = client or SocketClient(socket, spin=spin)
        req = {"instance": instance, "paradigm": paradigm, "n": n, "payloads": self.payloads}
        if play is not None:
            req["play"] = [str(a) for a in play]
            if others is not None:
                req["others"] = others
        if self.reward.weights is not None:
            req["reward"] = self.reward.weights
        required = shared_memory is True
        if shared_memory is None:
            shared_memory = SHARED_MEMORY_AVAILABLE
        elif shared_memory and not SHARED_MEMORY_AVAILABLE:
            raise ValueError("shared_memory=True needs a unix system with socket.recvmsg_into")
        if shared_memory:
            req["shared_memory"] = True
        self._mem = None
        fds = [] if shared_memory else None
        try:
            self.client.send(OP_OPEN, json.dumps(req).encode())
            info = _reply_json(self.client.recv(fds), "open", self.client.path)
            if shared_memory:
                self._mem = _map_shared(fds, info.get("shared_memory") or 0, info.get("shared_memory_error"),
                                        required)
        except BaseException:
            while fds:  # descriptors that came with a reply this client could not use
                os.close(fds.pop())
            if own:
                self.client.close()
            raise
        self.possible_agents = list(info.get("agents") or ())
        self.layout, self.offer = info["layout"], list(info.get("offer") or ())
        self.action_count, self.vector_length = list(info.get("actions") or ()), list(info.get("lengths") or ())
        self.obs_offset, self.mask_offset = [], []
        lv = m = 0
        for k, c in zip(self.vector_length, self.action_count):
            self.obs_offset.append(lv)
            self.mask_offset.append(m)
            lv, m = lv + k, m + c
        self.obs_stride, self.mask_stride = lv, m
        a = len(self.possible_agents)
        self._a = a
        self._fixed = StepArrays.size(n, a, lv, m)
        # with shared memory, one StepArrays over the mapping serves every step
        self._shared = None
        if self._mem is not None:
            if len(self._mem) < self._fixed:
                raise ServerError(0, f"a shared region of {len(self._mem)} bytes for replies of {self._fixed}", "")
            self._shared = StepArrays(memoryview(self._mem)[:self._fixed], n, a, lv, m)
        self._parts = {}  # (lo, hi): StepArrays.part of the shared region
        self._seed = seed
        self._streams = [SeedStream() for _ in range(n)]
        self._seeds = array.array("Q", [0] * n)
        self._acts = array.array("i", [NO_ACTION] * (n * a))
        self._cmds = bytearray(n)
        self._state = self._state_bytes = bytes([STATE_IDLE]) * n
        self._prev = [None] * n
        self._started = False
        self.metrics = [None] * n
        self._agents = [[] for _ in range(n)]
        # the next step's command from this step's state (step_arrays)
        self._next_cmd = bytes.maketrans(bytes([STATE_PENDING, STATE_ENDED, STATE_IDLE]),
                                         bytes([CMD_ACT, CMD_RESET if self.autoreset else CMD_NONE, CMD_NONE]))

    @property
    def agents(self):
        return [list(a) for a in self._agents]

    @property
    def done(self):
        return [s != STATE_PENDING for s in self._state]

    # -- the flat path ----------------------------------------------------
    @property
    def shared_memory(self):
        """Whether the replies' arrays come in memory shared with the
        server (the fast path) rather than through the socket."""
        return self._shared is not None

    def _request(self, cmds):
        self._send(cmds)
        return self._recv()

    def _send(self, cmds):
        self.client.send(OP_STEP, self._seeds, self._acts, cmds)

    def _recv(self):
        arr = self._recv_full()
        self._after(arr)
        return arr

    def _recv_full(self):
        """The next reply's StepArrays (every environment), its errors raised."""
        body = self.client.recv()
        if self._shared is not None:  # the arrays are in the shared region; the frame holds the tail
            arr = self._shared
            arr._read_tail(body)
        else:
            if len(body) < self._fixed:
                raise ServerError(0, f"a step reply of {len(body)} bytes, less than {self._fixed}", self.client.path)
            arr = StepArrays(body[:self._fixed], self.num_envs, self._a, self.obs_stride, self.mask_stride,
                             body[self._fixed:])
        errors = arr.tail.get("errors")
        if errors:
            e = errors[0]
            raise ItemError(500, f"environment {e['env']}: {e['error']}")
        return arr

    # -- parts: the groups of a pipelined_env, each request acting on one --
    def _send_part(self, lo, hi, cmds):
        """Send a step request with commands cmds for environments lo … hi−1
        that skips the others (neither stepped nor written)."""
        if lo == 0 and hi == self.num_envs:
            full = cmds
        else:
            full = bytearray([CMD_SKIP]) * self.num_envs
            full[lo:hi] = cmds
        self._send(full)

    def _send_part_arrays(self, lo, hi, actions):
        """send_arrays for environments lo … hi−1 (actions: (hi−lo)*A
        integers)."""
        a = self._a
        if len(actions) != (hi - lo) * a:
            raise ValueError(f"{len(actions)} actions for {hi - lo} environments of {a} agents")
        if not (isinstance(actions, array.array) and actions.typecode == "i"):
            actions = array.array("i", actions)
        self._acts[lo * a:hi * a] = actions
        state = self._state_bytes[lo:hi]
        if self.autoreset:
            i = state.find(STATE_ENDED)
            while i >= 0:
                self._seeds[lo + i] = self._streams[lo + i].next()
                i = state.find(STATE_ENDED, i + 1)
        self._send_part(lo, hi, state.translate(self._next_cmd))

    def _recv_part(self, lo, hi):
        """The reply to a request of _send_part: the StepArrays of
        environments lo … hi−1 (StepArrays.part). Only their entries are
        read: with shared memory the server may be writing the others'."""
        arr = self._recv_full()
        self._after(arr, lo, hi)
        if self._shared is None:
            return arr.part(lo, hi)
        p = self._parts.get((lo, hi))
        if p is None:  # views of the shared region, made once
            p = self._parts[(lo, hi)] = arr.part(lo, hi)
        p.tail = _part_tail(arr.tail, lo, hi)
        return p

    def _reset_seeds(self, seed, seeds):
        if seeds is not None:
            seeds = list(seeds)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} environments")
        else:
            if seed is None and not self._started:
                seed = self._seed
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        self._started = True
        return [st.next(sd) for st, sd in zip(self._streams, seeds)]

    def reset_arrays(self, seed=None, seeds=None):
        """Start n new episodes (seeds as in reset) and return their first
        StepArrays."""
        self.send_reset(seed, seeds)
        return self._recv()

    def send_reset(self, seed=None, seeds=None):
        """reset_arrays without waiting: recv_arrays returns its StepArrays."""
        for i, sd in enumerate(self._reset_seeds(seed, seeds)):
            self._seeds[i] = sd
        self._send(bytes([CMD_RESET]) * self.num_envs)

    def step_arrays(self, actions):
        """Step every environment with a pending decision; actions holds
        n*A integers (an array('i') is fastest), agent a of environment i at
        i*A + a, NO_ACTION for none (inactive agents' entries are ignored).
        An environment that ended at the previous step stays ended, or with
        autoreset starts anew (on a fresh training seed; its actions are
        ignored). Returns the StepArrays."""
        self.send_arrays(actions)
        return self._recv()

    def send_arrays(self, actions):
        """step_arrays without waiting for the reply: the server steps the
        episodes while the caller works (another vector environment's
        policy, say); recv_arrays returns the StepArrays. One request is
        outstanding at a time."""
        self._send_part_arrays(0, self.num_envs, actions)

    def recv_arrays(self):
        """The StepArrays of the request sent by send_arrays or send_reset."""
        return self._recv()

    def _after(self, arr, lo=0, hi=None):
        """Take the states of environments lo … hi−1 from arr."""
        hi = self.num_envs if hi is None else hi
        old = self._state_bytes
        state = bytes(arr.state[lo:hi])
        if STATE_IDLE in state:  # an environment left alone keeps its state (pending, ended or idle)
            state = bytes(o if s == STATE_IDLE else s for s, o in zip(state, old[lo:hi]))
        self._state = self._state_bytes = old[:lo] + state + old[hi:]

    # -- VectorEnv's API ------------------------------------------------------
    def reset(self, seed=None, seeds=None):
        arr = self.reset_arrays(seed, seeds)
        out = [self._first(arr, i) for i in range(self.num_envs)]
        return [o for o, _ in out], [inf for _, inf in out]

    def step(self, actions):
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} action dicts for {self.num_envs} environments")
        cmds = bytearray(self.num_envs)
        acts = array.array("i", [NO_ACTION] * (self.num_envs * self._a))
        for i, act in enumerate(actions):
            s = self._state[i]
            if s == STATE_PENDING:
                unknown = sorted(str(a) for a in act if a not in self.possible_agents)
                if unknown:  # a misspelled agent would otherwise fall back in silence
                    raise KeyError(f"actions for agents {unknown} that are not in this episode "
                                   f"(possible_agents: {self.possible_agents})")
                for ai, agent in enumerate(self.possible_agents):
                    x = act.get(agent)
                    if x is None:
                        continue
                    if not hasattr(x, "__index__") or isinstance(x, bool):
                        raise TypeError(f"action of {agent} must be an integer, got {x!r}")
                    x = int(x.__index__())
                    acts[i * self._a + ai] = x if -(1 << 31) < x < (1 << 31) else -1
                cmds[i] = CMD_ACT
            elif s == STATE_ENDED and self.autoreset:
                self._seeds[i] = self._streams[i].next()
                cmds[i] = CMD_RESET
        self._acts = acts
        prev_agents = [list(a) for a in self._agents]
        arr = self._request(cmds)
        problems = {}
        for p in arr.tail.get("problems") or ():
            problems.setdefault(p["env"], {})[p["agent"]] = p["problem"]
        ended = {e["env"]: e for e in arr.tail.get("ended") or ()}
        outs = []
        for i in range(self.num_envs):
            if cmds[i] == CMD_RESET:
                o, inf = self._first(arr, i, ended)
                live = list(o)
                outs.append((o, {a: 0.0 for a in live}, {a: False for a in live}, {a: False for a in live}, inf))
            elif cmds[i] == CMD_ACT:
                outs.append(self._stepped(arr, i, prev_agents[i], problems.get(i, {}), ended.get(i)))
            else:
                outs.append(({}, {}, {}, {}, {}))
        return tuple([o[k] for o in outs] for k in range(5))

    def close(self):
        if self._started and not self.client.broken:
            self.client.call(OP_CLOSE)
        self._state = self._state_bytes = bytes([STATE_IDLE]) * self.num_envs
        self._agents = [[] for _ in range(self.num_envs)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        self.client.close()
        self._unmap()

    def _unmap(self):
        self._shared = None
        if self._mem is not None:
            try:
                self._mem.close()
            except BufferError:  # a caller still holds arrays of it: unmapped when they are gone
                pass
            self._mem = None

    # -- the dicts of one environment -----------------------------------------
    def _progress(self, arr, i):
        return {"time": arr.time[i], "completed": arr.completed[i], "tardiness": arr.tardiness[i],
                "released": arr.released[i]}

    def _payload(self, arr, i):
        for p in arr.tail.get("payloads") or ():
            if p["env"] == i:
                return p["decision"]
        return None

    def _obs(self, arr, i, ai, active, payload):
        base = i * self.obs_stride + self.obs_offset[ai]
        vec = arr.obs[base:base + self.vector_length[ai]].tolist()
        view = None
        if active and payload is not None:
            view = payload["active_agents"].get(self.possible_agents[ai])
        o = {"vector": vec, "payload": view}
        if self.use_numpy:
            o["array"] = _np.asarray(vec, dtype=_np.float32)
        return o

    def _mask(self, arr, i, ai):
        base = i * self.mask_stride + self.mask_offset[ai]
        return list(arr.mask[base:base + self.action_count[ai]])

    def _first(self, arr, i, ended=None):
        """(observations, infos) of environment i's new episode."""
        self.metrics[i] = None
        self._prev[i] = self._progress(arr, i)
        if arr.state[i] == STATE_ENDED:  # no decision for this client
            e = (ended or {e["env"]: e for e in arr.tail.get("ended") or ()}).get(i) or {}
            self.metrics[i] = e.get("metrics") or {}
            self._agents[i] = []
            return {}, {}
        self._agents[i] = list(self.possible_agents)
        return self._decision(arr, i, {})

    def _decision(self, arr, i, problems):
        payload = self._payload(arr, i) if self.payloads else None
        progress = self._prev[i]
        obs, infos = {}, {}
        for ai, agent in enumerate(self.possible_agents):
            active = arr.active[i * self._a + ai] == 1
            obs[agent] = o = self._obs(arr, i, ai, active, payload)
            info = {"active": active, "action_mask": self._mask(arr, i, ai), "progress": dict(progress),
                    "seed": arr.seed[i], "step": arr.step[i], "time": arr.time[i]}
            if active:
                info["kind"] = o["payload"]["kind"] if o["payload"] is not None else _kind(o["vector"])
            if agent in problems:
                info["problem"] = problems[agent]
            infos[agent] = info
        return obs, infos

    def _stepped(self, arr, i, live, problems, end):
        prev, progress = self._prev[i], self._progress(arr, i)
        self._prev[i] = progress
        if arr.state[i] == STATE_ENDED:
            m = end["metrics"] if end else {}
            r = arr.reward[i] if self.reward.weights is not None else self.reward(prev, progress, m)
            self.metrics[i] = m
            status = end["status"] if end else ""
            terminated = status in TERMINAL_STATUSES
            obs = {a: self._obs(arr, i, ai, False, None) for ai, a in enumerate(self.possible_agents) if a in live}
            info = {"metrics": {k: m.get(k) for k in PRIMARY_METRICS}, "metrics_json": m, "status": status,
                    "seed": arr.seed[i]}
            infos = {}
            for ai, a in enumerate(self.possible_agents):
                if a not in live:
                    continue
                infos[a] = dict(info, active=False, action_mask=[0] * self.action_count[ai], progress=dict(progress))
                if a in problems:
                    infos[a]["problem"] = problems[a]
            self._agents[i] = []
            return (obs, {a: r for a in live}, {a: terminated for a in live}, {a: not terminated for a in live},
                    infos)
        r = arr.reward[i] if self.reward.weights is not None else self.reward(prev, progress, None)
        obs, infos = self._decision(arr, i, problems)
        return obs, {a: r for a in live}, {a: False for a in live}, {a: False for a in live}, infos


def _kind(vector):
    for k, x in zip(KINDS, vector):
        if x == 1.0:
            return k
    return None
