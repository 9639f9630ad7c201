"""The NumPy side of the environment: StepArrays.numpy() (zero-copy,
batched by environment) and the float32 observation arrays of the dict
API, over both transports.

Run by ``go test ./des/envsock -run TestPythonNumPy`` with a Python that
imports NumPy (Debian's python3-numpy in CI), COORDBENCH_URL,
COORDBENCH_TOKEN and COORDBENCH_SOCKET set. Not collected by ``unittest
discover``'s default pattern.
"""

import array
import os
import random
import unittest

import coordbench_env as ce
import numpy as np

URL = os.environ.get("COORDBENCH_URL")
TOKEN = os.environ.get("COORDBENCH_TOKEN")
SOCKET = os.environ.get("COORDBENCH_SOCKET")


class NumPyTest(unittest.TestCase):
    def setUp(self):
        if not (URL and SOCKET):
            self.fail("COORDBENCH_URL and COORDBENCH_SOCKET must be set (go test ./des/envsock -run TestPythonNumPy)")
        self.assertTrue(ce.numpy_available())

    def test_step_arrays_numpy(self):
        """numpy() views the same values as the memoryviews, shaped by
        environment; a NumPy policy (first legal action by argmax) plays
        the same episodes as the same policy in pure Python."""
        for shm in (True, False):
            with self.subTest(shared_memory=shm):
                kw = dict(instance="A3C9-1", paradigm="holonic_hybrid", autoreset=True, seed=6, shared_memory=shm)
                a = ce.vector_env(4, socket=SOCKET, **kw)
                self.addCleanup(a.__exit__, None, None, None)
                b = ce.vector_env(4, socket=SOCKET, **kw)
                self.addCleanup(b.__exit__, None, None, None)
                n, A = 4, len(a.possible_agents)
                x, y = a.reset_arrays(), b.reset_arrays()
                ends = 0
                for k in range(3000):
                    d = x.numpy()
                    self.assertEqual(d["obs"].shape, (n, a.obs_stride))
                    self.assertEqual(d["mask"].shape, (n, a.mask_stride))
                    self.assertEqual(d["mask"].dtype, np.bool_)
                    self.assertEqual(d["obs"].ravel().tolist(), y.obs.tolist(), f"step {k}")
                    self.assertEqual(d["mask"].astype(np.uint8).tobytes(), bytes(y.mask))
                    self.assertEqual(d["active"].astype(np.uint8).tobytes(), bytes(y.active))
                    for key in ("time", "reward", "tardiness", "seed", "step", "completed", "released", "state",
                                "terminated", "truncated"):
                        self.assertEqual(d[key].tolist(), getattr(y, key).tolist(), f"step {k}: {key}")
                    if shm:
                        self.assertFalse(d["obs"].flags.writeable)
                    # the policy: NumPy on one side, pure Python on the other
                    acts = np.full(n * A, ce.NO_ACTION, dtype=np.int32)
                    pacts = array.array("i", [ce.NO_ACTION] * (n * A))
                    for ai in range(A):
                        lo = a.mask_offset[ai]
                        block = d["mask"][:, lo:lo + a.action_count[ai]]
                        first = block.argmax(axis=1)
                        live = d["active"][:, ai]
                        acts[ai::A][live] = first[live]
                        for i in range(n):
                            if y.active[i * A + ai]:
                                base = i * b.mask_stride + lo
                                pacts[i * A + ai] = bytes(y.mask[base:base + b.action_count[ai]]).find(1)
                    self.assertEqual(acts.tolist(), pacts.tolist())
                    if ends >= 2:
                        break
                    x, y = a.step_arrays(acts), b.step_arrays(pacts)
                    ends += int((x.numpy()["state"] == 1).sum())
                self.assertGreaterEqual(ends, 2, "no episode ended")

    def test_dict_api_arrays(self):
        """With NumPy, every observation of the dict API also carries its
        vector as a float32 array, over HTTP and over the socket."""
        for name, env in (("http", ce.vector_env(2, base_url=URL, token=TOKEN, paradigm="holonic_hybrid")),
                          ("socket", ce.vector_env(2, socket=SOCKET, paradigm="holonic_hybrid"))):
            with self.subTest(transport=name):
                self.addCleanup(env.__exit__, None, None, None)
                obs, infos = env.reset(seed=3)
                rng = random.Random(1)
                for _ in range(20):
                    for o in obs:
                        for agent, ob in o.items():
                            self.assertEqual(ob["array"].dtype, np.float32)
                            self.assertEqual(ob["array"].tolist(), np.asarray(ob["vector"], np.float32).tolist())
                    if all(env.done):
                        break
                    acts = [{a: rng.choice([k for k, m in enumerate(inf["action_mask"]) if m])
                             for a, inf in infos[i].items() if inf["active"]} for i in range(2)]
                    obs, _, _, _, infos = env.step(acts)

    def test_pipelined_numpy(self):
        with ce.pipelined_env(4, groups=2, socket=SOCKET, seed=1) as p:
            p.async_reset()
            g, arr = p.recv()
            d = arr.numpy()
            self.assertEqual(d["obs"].shape, (p.group_size, p.obs_stride))
            self.assertTrue((d["state"] == 0).all())


if __name__ == "__main__":
    unittest.main()
