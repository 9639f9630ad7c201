"""The socket transport against the HTTP one: the same observations,
masks, rewards, infos and seeds, step by step, over several episodes and
paradigms (docs/python-env.md, "The socket transport").

Not collected by ``unittest discover`` with its default pattern (it needs
both servers): ``go test ./des/envsock -run TestPythonTransport`` starts a
des serve server and a des serve-socket server and runs it with
COORDBENCH_URL, COORDBENCH_TOKEN and COORDBENCH_SOCKET set.
"""

import array
import os
import random
import unittest

import coordbench_env as ce

URL = os.environ.get("COORDBENCH_URL")
TOKEN = os.environ.get("COORDBENCH_TOKEN")
SOCKET = os.environ.get("COORDBENCH_SOCKET")


def strip(x, payload=True):
    """x without what differs by construction: the controller's name in
    metrics ("http" or "socket"), and, when payload is False, the payloads
    (the socket transport sends none unless asked)."""
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if k == "controller" or (k == "payload" and not payload) or k == "array":
                continue
            out[k] = strip(v, payload)
        return out
    if isinstance(x, (list, tuple)):
        return type(x)(strip(v, payload) for v in x)
    return x


def choose(rng, infos_i):
    """Random actions for one environment: mostly legal, sometimes an
    illegal index or none at all (both fall back, with a problem)."""
    acts = {}
    for agent, info in infos_i.items():
        if not info["active"]:
            continue
        u = rng.random()
        if u < 0.05:
            continue  # no action: falls back
        if u < 0.1:  # a masked-0 index, or one past the end
            zeros = [k for k, m in enumerate(info["action_mask"]) if not m]
            acts[agent] = zeros[0] if zeros else len(info["action_mask"])
            continue
        legal = [k for k, m in enumerate(info["action_mask"]) if m]
        acts[agent] = rng.choice(legal)
    return acts


def arrays(arr):
    """Per environment of a StepArrays: everything it says of it, as plain
    values (the tail's entries by their env index)."""
    n = len(arr.state)
    A, M, L = len(arr.active) // n, len(arr.mask) // n, len(arr.obs) // n
    tail = {}
    for key, items in arr.tail.items():
        for it in items:
            tail.setdefault(it["env"], []).append((key, {k: v for k, v in it.items() if k != "env"}))
    return [(arr.time[i], arr.reward[i], arr.tardiness[i], arr.obs[i * L:(i + 1) * L].tolist(), arr.seed[i],
             arr.step[i], arr.completed[i], arr.released[i], arr.state[i], arr.terminated[i], arr.truncated[i],
             bytes(arr.active[i * A:(i + 1) * A]), bytes(arr.mask[i * M:(i + 1) * M]), tail.get(i, []))
            for i in range(n)]


def random_actions(rng, arr, v):
    """Flat actions for every active agent of arr: mostly a random legal
    one, now and then none (NO_ACTION: falls back)."""
    A = len(v.possible_agents)
    acts = array.array("i", [ce.NO_ACTION] * (len(arr.state) * A))
    for i in range(len(arr.state)):
        for ai in range(A):
            if not arr.active[i * A + ai] or rng.random() < 0.05:
                continue
            base = i * v.mask_stride + v.mask_offset[ai]
            legal = [k for k in range(v.action_count[ai]) if arr.mask[base + k]]
            acts[i * A + ai] = rng.choice(legal)
    return acts


class SocketTransportTest(unittest.TestCase):
    def setUp(self):
        if not (URL and SOCKET):
            self.fail("COORDBENCH_URL and COORDBENCH_SOCKET must be set (go test ./des/envsock -run TestPythonTransport)")

    def pair(self, n, payloads=True, **kw):
        h = ce.vector_env(n, base_url=URL, token=TOKEN, **kw)
        s = ce.vector_env(n, socket=SOCKET, payloads=payloads, **kw)
        self.addCleanup(h.close)
        self.addCleanup(s.__exit__, None, None, None)
        return h, s

    def play(self, h, s, seed, payload=True, steps=100000, rng_seed=1):
        """Play h and s side by side with the same actions until every
        episode ended; compare everything each step returns."""
        rng = random.Random(rng_seed)
        ho, hi = h.reset(seed=seed)
        so, si = s.reset(seed=seed)
        self.assertEqual(strip(ho, payload), strip(so, payload))
        self.assertEqual(strip(hi), strip(si))
        n, k = len(ho), 0
        while not all(h.done) and k < steps:
            acts = [{} if h.done[i] else choose(rng, hi[i]) for i in range(n)]
            hr = h.step(acts)
            sr = s.step(acts)
            for name, a, b in zip(("observations", "rewards", "terminations", "truncations", "infos"), hr, sr):
                self.assertEqual(strip(a, payload or name != "observations"), strip(b, payload or name != "observations"),
                                 f"step {k}: {name} differ")
            hi = hr[4]
            self.assertEqual(h.done, s.done)
            k += 1
        self.assertTrue(all(s.done))
        self.assertEqual(strip(h.metrics), strip(s.metrics))
        return k

    def test_same_as_http(self):
        for paradigm in ("centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid", "adaptive_agent",
                         "holonic_summary"):
            with self.subTest(paradigm=paradigm):
                h, s = self.pair(3, instance="A3C9-1", paradigm=paradigm)
                self.assertGreater(self.play(h, s, seed=11), 0)
                self.assertTrue(any(m["status"] for m in s.metrics))

    def test_play_some_agents(self):
        """play and others as over HTTP: the played agents only, the
        server's answers for the rest, an empty play."""
        for paradigm, play, others in (("adaptive_agent", ["mode_selector"], None),
                                       ("holonic_hybrid", ["plant", "area:A1"], "greedy"),
                                       ("heterarchical_cnp", ["cell:C01"], "random"),
                                       ("hierarchical", [], None)):
            with self.subTest(paradigm=paradigm, play=play, others=others):
                for payloads in (True, False):
                    h, s = self.pair(2, payloads=payloads, instance="A3C9-1", paradigm=paradigm, play=play,
                                     others=others)
                    self.assertEqual(s.possible_agents, play)
                    k = self.play(h, s, seed=13, payload=payloads)
                    self.assertEqual(k > 0, bool(play), "steps played")
                    self.assertTrue(all(m["status"] for m in s.metrics))

    def test_without_payloads_and_rewards(self):
        """The default socket env sends no payloads; vectors, masks, infos
        (kind included) and rewards (weights and a callable) still agree."""
        for reward in ({"time": -0.5, "completed": 2, "released": 0.25, "fallbacks": -3, "unfinished": -1},
                       lambda prev, cur, m: cur["completed"] - prev["completed"] - (m or {}).get("G_ut", 0)):
            with self.subTest(reward=reward):
                h, s = self.pair(2, payloads=False, instance="gen:A2C5", paradigm="holonic_hybrid", reward=reward)
                self.play(h, s, seed=5, payload=False, rng_seed=7)

    def test_seeds_and_autoreset(self):
        """Drawn training seeds and the auto-reset agree too."""
        h, s = self.pair(2, instance="A3C9-1", paradigm="centralized", autoreset=True, seed=3)
        ho, hi = h.reset()
        so, si = s.reset()
        self.assertEqual(strip(hi), strip(si))
        rng = random.Random(2)
        ends = 0
        for k in range(2000):
            acts = [{"plant": rng.choice([j for j, m in enumerate(inf["plant"]["action_mask"]) if m])}
                    if inf.get("plant", {}).get("active") else {} for inf in hi]
            hr, sr = h.step(acts), s.step(acts)
            self.assertEqual(strip(hr), strip(sr), f"step {k}")
            ends += sum(1 for t in hr[2] for v in t.values() if v) + sum(1 for t in hr[3] for v in t.values() if v)
            hi = hr[4]
            if ends >= 3:
                break
        self.assertGreaterEqual(ends, 3, "no episode ended: the auto-reset was not exercised")

    def test_flat_arrays(self):
        """step_arrays gives the dict API's vectors, masks and rewards."""
        _, s = self.pair(3, payloads=False, instance="A3C9-1", paradigm="holonic_hybrid")
        d = ce.vector_env(3, socket=SOCKET, instance="A3C9-1", paradigm="holonic_hybrid")
        self.addCleanup(d.__exit__, None, None, None)
        A = len(s.possible_agents)
        arr = s.reset_arrays(seed=21)
        do, di = d.reset(seed=21)
        steps = 0
        while not all(s.done):
            acts = array.array("i", [ce.NO_ACTION] * (3 * A))
            dacts = []
            for i in range(3):
                da = {}
                for ai, agent in enumerate(s.possible_agents):
                    base = i * s.mask_stride + s.mask_offset[ai]
                    mask = bytes(arr.mask[base:base + s.action_count[ai]])
                    vbase = i * s.obs_stride + s.obs_offset[ai]
                    if not d.done[i]:
                        self.assertEqual(arr.obs[vbase:vbase + s.vector_length[ai]].tolist(), do[i][agent]["vector"])
                        self.assertEqual(list(mask), di[i][agent]["action_mask"])
                    if arr.active[i * A + ai]:
                        acts[i * A + ai] = da[agent] = mask.find(1)
                dacts.append(da)
            arr = s.step_arrays(acts)
            do, dr, dterm, dtrunc, di = d.step(dacts)
            for i in range(3):
                if dr[i]:
                    self.assertEqual(arr.reward[i], next(iter(dr[i].values())))
            self.assertEqual(s.done, d.done)
            steps += 1
        self.assertGreater(steps, 10)

    def test_shared_memory_and_copy(self):
        """The arrays in shared memory are those sent through the socket,
        step by step, tails included."""
        kw = dict(instance="gen:A2C5", paradigm="holonic_hybrid", autoreset=True, seed=4)
        shm = ce.vector_env(3, socket=SOCKET, shared_memory=True, **kw)
        self.addCleanup(shm.__exit__, None, None, None)
        cp = ce.vector_env(3, socket=SOCKET, shared_memory=False, **kw)
        self.addCleanup(cp.__exit__, None, None, None)
        self.assertTrue(shm.shared_memory)
        self.assertFalse(cp.shared_memory)
        rng = random.Random(3)
        a, b = shm.reset_arrays(), cp.reset_arrays()
        ends = 0
        for k in range(5000):
            self.assertEqual(arrays(a), arrays(b), f"step {k}")
            if ends >= 2:
                break
            acts = random_actions(rng, a, shm)
            a, b = shm.step_arrays(acts), cp.step_arrays(acts)
            ends += bytes(a.state).count(1)
        self.assertGreaterEqual(ends, 2, "no episode ended")

    def test_pipelined_same_as_vector(self):
        """pipelined_env(n, groups) plays the episodes of vector_env(n) with
        the same seed: every environment's arrays agree, step for step."""
        cases = ((2, "A3C9-1", "centralized", None, ce.socket_env.SPIN),
                 (3, "gen:A2C5", "holonic_hybrid", None, ce.socket_env.SPIN),
                 (2, "A3C9-1", "hierarchical", False, 0))  # replies through the socket, no spinning
        for groups, instance, paradigm, shm, spin in cases:
            with self.subTest(groups=groups, paradigm=paradigm, shared_memory=shm):
                n = 2 * groups
                kw = dict(instance=instance, paradigm=paradigm, seed=9)
                v = ce.vector_env(n, socket=SOCKET, autoreset=True, **kw)
                self.addCleanup(v.__exit__, None, None, None)
                p = ce.pipelined_env(n, groups=groups, socket=SOCKET, shared_memory=shm, spin=spin, **kw)
                self.addCleanup(p.close)
                self.assertEqual(p.shared_memory, shm is None and ce.socket_env.SHARED_MEMORY_AVAILABLE)
                A, m = len(v.possible_agents), p.group_size
                rng = random.Random(5)
                arr = v.reset_arrays()
                p.async_reset()
                ends = 0
                for k in range(5000):
                    if ends >= 2:
                        break
                    want = arrays(arr)
                    acts = random_actions(rng, arr, v)
                    for g in range(groups):
                        gg, garr = p.recv()
                        self.assertEqual(gg, g)
                        got = arrays(garr)
                        self.assertEqual(len(got), m)
                        for i in range(m):
                            self.assertEqual(got[i], want[p.offsets[g] + i], f"step {k}, environment {p.offsets[g] + i}")
                        p.send(acts[p.offsets[g] * A:(p.offsets[g] + m) * A])
                    arr = v.step_arrays(acts)
                    ends += bytes(arr.state).count(1)
                self.assertGreaterEqual(ends, 2, "no episode ended")
                # a new reset with replies on their way reads them first and starts every episode anew
                p.async_reset(seed=9)
                arr = v.reset_arrays(seed=9)
                want = arrays(arr)
                for g in range(groups):
                    gg, garr = p.recv()
                    self.assertEqual((gg, arrays(garr)), (g, want[p.offsets[g]:p.offsets[g] + m]))
                    p.send(random_actions(rng, garr, v))
        with self.assertRaises(ValueError):
            ce.pipelined_env(5, groups=2, socket=SOCKET)
        with ce.pipelined_env(2, groups=2, socket=SOCKET) as p:
            with self.assertRaises(RuntimeError):
                p.recv()
            with self.assertRaises(RuntimeError):
                p.send([0, 0])

    def test_pipelined_frames(self):
        """Replies to requests sent back to back that arrive in one read
        are told apart (the bytes past one reply are the next one's), and a
        bad spin is refused."""
        import json
        import time
        from coordbench_env.socket_env import OP_CPU, OP_STEP
        for spin in (0, ce.socket_env.SPIN):
            c = ce.SocketClient(SOCKET, spin=spin)
            self.addCleanup(c.close)
            for _ in range(3):
                c.send(OP_CPU)
            c.send(OP_STEP, b"")  # refused (no session): a whole error frame, the stream stays in step
            c.send(OP_CPU)
            time.sleep(0.2)  # every reply is waiting: the first read takes them all
            for _ in range(3):
                self.assertGreaterEqual(json.loads(bytes(c.recv()))["cpu_nanos"], -1)
            with self.assertRaises(ce.ServerError):
                c.recv()
            self.assertFalse(c.broken)
            self.assertGreaterEqual(json.loads(bytes(c.recv()))["cpu_nanos"], -1)
        # a request larger than the socket takes at once goes out in pieces, waiting for room
        import socket
        c = ce.SocketClient(SOCKET)
        self.addCleanup(c.close)
        c._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        c.send(OP_CPU, b"x" * 900_000)
        self.assertGreaterEqual(json.loads(bytes(c.recv()))["cpu_nanos"], -1)
        for spin in (-1, float("nan"), None):
            with self.assertRaises((ValueError, TypeError)):
                ce.SocketClient(SOCKET, spin=spin)

    def test_errors(self):
        with self.assertRaises(ce.ServerError):
            ce.vector_env(2, socket=SOCKET, instance="no-such-instance")
        with self.assertRaises(ce.ServerError):
            ce.vector_env(2, socket=SOCKET, paradigm="no-such-paradigm")
        with self.assertRaises(TypeError):
            ce.vector_env(2, socket=SOCKET, play="plant")
        with self.assertRaises(ValueError):
            ce.vector_env(2, socket=SOCKET, others="greedy")
        for play, others in ((["nobody"], None), (["plant", "plant"], None), (["plant"], "no-such-controller")):
            with self.assertRaises(ce.ServerError):
                ce.vector_env(2, socket=SOCKET, play=play, others=others)
        with self.assertRaises(ConnectionError):
            ce.vector_env(2, socket=SOCKET + ".missing")
        with ce.vector_env(1, socket=SOCKET) as v:
            v.reset(seed=1)
            with self.assertRaises(KeyError):
                v.step([{"plnat": 0}])
            with self.assertRaises(TypeError):
                v.step([{"plant": "0"}])

    def test_interrupted_read(self):
        """A reply left half read (Ctrl-C in the middle of a step) breaks
        the client: the next request says so at once instead of reading
        the rest of the old frame as its reply, and closing does not wait."""
        for shm in (True, False):
            with self.subTest(shared_memory=shm):
                v = ce.vector_env(2, socket=SOCKET, autoreset=True, shared_memory=shm)
                self.addCleanup(v.__exit__, None, None, None)
                arr = v.reset_arrays(seed=1)
                acts = random_actions(random.Random(1), arr, v)
                c = v.client
                read = c._recv_some

                def cut(view, fds):
                    read(view[:3], fds)  # three bytes of the header, then the interrupt
                    raise KeyboardInterrupt

                c._recv_some = cut
                with self.assertRaises(KeyboardInterrupt):
                    v.step_arrays(acts)
                c._recv_some = read
                self.assertTrue(c.broken)
                with self.assertRaises(ConnectionError):
                    v.step_arrays(acts)
                v.close()  # no request on a broken stream
        with ce.pipelined_env(4, groups=2, socket=SOCKET, seed=2) as p:
            p.async_reset()
            g, arr = p.recv()
            p.send(random_actions(random.Random(2), arr, p.env))
        self.assertEqual(p.client._sock.fileno(), -1)  # closed with two replies on their way, without reading them
        with self.assertRaises(RuntimeError):
            p.recv()

    def test_shared_region_sealed(self):
        """A client cannot resize the shared region (which would make the
        server's writes fault): it is sealed (Linux; elsewhere the size
        cannot be sealed, docs/python-env.md)."""
        import json
        import struct
        import sys
        from coordbench_env.socket_env import OP_OPEN, OP_STEP
        c = ce.SocketClient(SOCKET)
        self.addCleanup(c.close)
        fds = []
        c.send(OP_OPEN, json.dumps({"instance": "A3C9-1", "paradigm": "centralized", "n": 2,
                                    "shared_memory": True}).encode())
        info = json.loads(bytes(c.recv(fds)))
        self.assertEqual(len(fds), 1)
        self.addCleanup(os.close, fds[0])
        self.assertGreater(info["shared_memory"], 0)
        if sys.platform.startswith("linux"):
            for size in (0, info["shared_memory"] * 2):
                with self.assertRaises(OSError):
                    os.ftruncate(fds[0], size)
        self.assertEqual(os.fstat(fds[0]).st_size, info["shared_memory"])
        # the session still steps: two resets, the tail only in the frame
        body = c.call(OP_STEP, struct.pack("<2Q", 1, 2), struct.pack("<2i", -1, -1), bytes([2, 2]))
        (k,) = struct.unpack_from("<I", body)
        self.assertEqual(len(body), 4 + k)

    def test_lying_server(self):
        """A server that answers the open with garbage (not JSON, not an
        object; with a descriptor attached) gives a ServerError, and the
        descriptor it passed is closed."""
        import socket
        import struct
        import tempfile
        import threading
        d = tempfile.mkdtemp()
        self.addCleanup(os.rmdir, d)
        path = os.path.join(d, "s")
        for body in (b"not json", b"[1]"):
            before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
            srv = socket.socket(socket.AF_UNIX)
            srv.bind(path)
            srv.listen(1)

            def serve():
                c, _ = srv.accept()
                c.recv(1 << 16)
                r, w = os.pipe()
                socket.send_fds(c, [struct.pack("<IB3x", len(body), 0) + body], [r])
                os.close(r)
                os.close(w)
                c.close()

            th = threading.Thread(target=serve)
            th.start()
            with self.assertRaises(ce.ServerError):
                ce.vector_env(2, socket=path, shared_memory=True)
            th.join()
            srv.close()
            os.remove(path)
            if before is not None:
                self.assertEqual(len(os.listdir("/proc/self/fd")), before, "a descriptor leaked")

    def test_bench(self):
        c = ce.SocketClient(SOCKET)
        self.addCleanup(c.close)
        r = c.bench("A3C9-1", "centralized", [1, 2])
        self.assertEqual(r["episodes"], 2)
        self.assertGreater(r["decisions"], 0)
        self.assertGreater(r["nanos"], 0)


if __name__ == "__main__":
    unittest.main()
