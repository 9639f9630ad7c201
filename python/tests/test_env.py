"""The API contract of coordbench_env against a live des serve: the checks
PettingZoo's parallel_api_test and seed_test make, masks, the end of an
episode, the vector env against single envs, the Gymnasium wrapper, and
errors.

The server comes from the environment: COORDBENCH_URL and
COORDBENCH_TOKEN (des/envserver's TestPythonEnv starts one and runs
``python3 -m unittest discover -s python/tests`` with PYTHONPATH=python).
Without COORDBENCH_URL the tests are skipped.
"""

import os
import random
import unittest

import coordbench_env as ce

URL = os.environ.get("COORDBENCH_URL")
TOKEN = os.environ.get("COORDBENCH_TOKEN")
SMALL = "gen:A2C4J6"  # a small generated plant: short multi-agent episodes
PARADIGMS = ("centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid")


def make(**kw):
    kw.setdefault("instance", SMALL)
    return ce.parallel_env(base_url=URL, token=TOKEN, **kw)


def first_legal(infos, agents):
    return {a: infos[a]["action_mask"].index(1) for a in agents if infos[a]["active"]}


def sampled(env, infos):
    return {a: env.action_space(a).sample(infos[a]["action_mask"]) for a in env.agents if infos[a]["active"]}


def play(env, seed, policy, limit=100000):
    """Plays an episode; returns the trajectory of (vectors, payloads,
    rewards) and the last infos."""
    obs, infos = env.reset(seed=seed)
    traj = [({a: o["vector"] for a, o in obs.items()}, {a: o["payload"] for a, o in obs.items()}, None)]
    steps = 0
    while env.agents and steps < limit:
        obs, rew, term, trunc, infos = env.step(policy(env, infos))
        traj.append(({a: o["vector"] for a, o in obs.items()}, {a: o["payload"] for a, o in obs.items()}, rew))
        steps += 1
    return traj, infos


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class ParallelAPI(unittest.TestCase):
    def test_parallel_api(self):
        for paradigm in PARADIGMS:
            with self.subTest(paradigm=paradigm), make(paradigm=paradigm) as env:
                obs, infos = env.reset(seed=5)
                self.assertEqual(env.agents, env.possible_agents)
                self.assertEqual(env.possible_agents[0], "plant")
                self.assertEqual(set(obs), set(env.agents))
                self.assertEqual(set(infos), set(env.agents))
                active_seen = set()
                steps = 0
                while env.agents:
                    live = list(env.agents)
                    active = [a for a in live if infos[a]["active"]]
                    self.assertTrue(active, "some agent must act at every step")
                    for a in live:
                        space = env.action_space(a)
                        mask = infos[a]["action_mask"]
                        self.assertEqual(len(mask), space.n)
                        self.assertTrue(env.observation_space(a).contains(obs[a]))
                        if infos[a]["active"]:
                            self.assertIsNotNone(obs[a]["payload"])
                            self.assertEqual(obs[a]["payload"]["agent_id"], a)
                            legal = obs[a]["payload"]["legal_actions"]
                            self.assertEqual([i for i, m in enumerate(mask) if m], legal)
                            active_seen.add(a.split(":")[0])
                        else:
                            self.assertEqual(sum(mask), 0)
                            self.assertIsNone(obs[a]["payload"])
                    obs, rew, term, trunc, infos = env.step(sampled(env, infos))
                    for d in (obs, rew, term, trunc, infos):
                        self.assertEqual(set(d), set(live))
                    for a in live:
                        self.assertIsInstance(rew[a], float)
                        if term[a] or trunc[a]:
                            self.assertNotIn(a, env.agents)
                    steps += 1
                self.assertEqual(env.agents, [])
                self.assertGreater(steps, 0)
                self.assertIn("plant", active_seen)
                if paradigm == "heterarchical_cnp":
                    self.assertIn("cell", active_seen)
                if paradigm == "hierarchical":
                    self.assertIn("area", active_seen)
                with self.assertRaises(RuntimeError):
                    env.step({})

    def test_end_of_episode(self):
        with make(paradigm="holonic_hybrid") as env:
            obs, infos = env.reset(seed=2)
            total = 0.0
            while env.agents:
                live = list(env.agents)
                obs, rew, term, trunc, infos = env.step(first_legal(infos, env.agents))
                total += rew["plant"]
            self.assertTrue(all(term[a] for a in live))
            self.assertFalse(any(trunc[a] for a in live))
            self.assertEqual(set(term), set(env.possible_agents))
            m = infos["plant"]["metrics"]
            self.assertEqual(tuple(m), ce.PRIMARY_METRICS)
            self.assertEqual(len(m), 15)
            self.assertEqual(infos["plant"]["status"], "done")
            self.assertEqual(env.metrics["G_cj"], m["G_cj"])
            # The default reward sums to -(G_td + G_ut).
            self.assertAlmostEqual(total, -(m["G_td"] + m["G_ut"]), places=6)
            self.assertEqual(infos["plant"]["progress"]["completed"], m["G_cj"])

    def test_seed_determinism(self):
        def run(seed):
            env = make(paradigm="heterarchical_cnp")
            try:
                return play(env, seed, sampled)[0]
            finally:
                env.close()
        a, b = run(11), run(11)
        self.assertEqual(len(a), len(b))
        self.assertEqual(a, b)
        self.assertNotEqual(a, run(12))

    def test_masks(self):
        """Every masked-1 action is taken as is; a masked-0 one falls back
        and is reported, as the server audits it."""
        rng = random.Random(3)
        with make(paradigm="hierarchical") as env:
            obs, infos = env.reset(seed=4)
            problems = 0
            while env.agents:
                acts, illegal = {}, None
                for a in env.agents:
                    if not infos[a]["active"]:
                        continue
                    mask = infos[a]["action_mask"]
                    zeros = [i for i, m in enumerate(mask) if not m]
                    if problems == 0 and zeros:
                        acts[a], illegal = zeros[0], a
                    else:
                        acts[a] = rng.choice([i for i, m in enumerate(mask) if m])
                obs, rew, term, trunc, infos = env.step(acts)
                for a in acts:
                    if a == illegal:
                        self.assertIn("not legal", infos[a].get("problem", ""))
                        problems += 1
                    else:
                        self.assertNotIn("problem", infos[a], (a, acts[a]))
            self.assertEqual(problems, 1)
            self.assertGreaterEqual(env.metrics["G_fb"], 1)
            audits = env.client.artifact(env.episode_id, "decisions.jsonl")
            self.assertIn("illegal action index", audits)
            with self.assertRaises(ce.ServerError):  # an answer over the bound is refused, not read whole
                env.client.artifact(env.episode_id, "decisions.jsonl", limit=100)

    def test_vector_matches_single(self):
        n, seed = 3, 20
        policy = lambda env, infos: first_legal(infos, env.agents)  # noqa: E731
        singles = []
        for i in range(n):
            env = make(paradigm="holonic_hybrid")
            singles.append(play(env, seed + i, policy)[0])
            env.close()
        with ce.vector_env(n, base_url=URL, token=TOKEN, instance=SMALL, paradigm="holonic_hybrid", seed=seed) as venv:
            obs, infos = venv.reset()
            for i in range(n):
                self.assertEqual({a: o["vector"] for a, o in obs[i].items()}, singles[i][0][0])
            k = 1
            while not all(venv.done):
                acts = [first_legal(infos[i], venv.agents[i]) if not venv.done[i] else {} for i in range(n)]
                obs, rew, term, trunc, infos = venv.step(acts)
                for i in range(n):
                    if k < len(singles[i]):
                        vecs, payloads, rews = singles[i][k]
                        self.assertEqual({a: o["vector"] for a, o in obs[i].items()}, vecs, (i, k))
                        self.assertEqual({a: o["payload"] for a, o in obs[i].items()}, payloads, (i, k))
                        self.assertEqual(rew[i], rews)
                    else:
                        self.assertEqual(obs[i], {})
                k += 1
            self.assertEqual(k, max(len(s) for s in singles))
            self.assertTrue(all(m is not None for m in venv.metrics))


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class Gym(unittest.TestCase):
    def test_gym_wrapper(self):
        with ce.gym_env(base_url=URL, token=TOKEN, instance=SMALL, seed=1) as env:
            obs, info = env.reset()
            self.assertEqual(env.action_space.n, len(info["action_mask"]))
            self.assertTrue(env.observation_space.contains(obs))
            steps, total = 0, 0.0
            while True:
                action = env.action_space.sample(info["action_mask"])
                obs, reward, terminated, truncated, info = env.step(action)
                total += reward
                steps += 1
                if terminated or truncated:
                    break
            self.assertTrue(terminated)
            self.assertEqual(info["metrics"]["G_ds"], steps)
            self.assertAlmostEqual(total, -(info["metrics"]["G_td"] + info["metrics"]["G_ut"]), places=6)

    def test_gym_refuses_multi_agent(self):
        env = ce.gym_env(base_url=URL, token=TOKEN, instance=SMALL, paradigm="hierarchical")
        with self.assertRaises(ValueError):
            env.reset()


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class Errors(unittest.TestCase):
    def test_wrong_token(self):
        env = ce.parallel_env(base_url=URL, token="wrong-" + (TOKEN or ""), instance=SMALL)
        with self.assertRaises(ce.ServerError) as cm:
            env.reset()
        self.assertEqual(cm.exception.code, 401)
        self.assertNotIn(TOKEN or "-", str(cm.exception))

    def test_bad_requests(self):
        with self.assertRaises(ce.ItemError) as cm:
            make(paradigm="no-such-paradigm").reset()
        self.assertEqual(cm.exception.code, 400)
        self.assertIn("no-such-paradigm", str(cm.exception))
        with self.assertRaises(ce.ItemError):
            make(instance="/etc/passwd").reset()
        with make() as env:
            with self.assertRaises(RuntimeError):
                env.step({})
            env.reset(seed=1)
            with self.assertRaises(TypeError):
                env.step({"plant": "zero"})
        with self.assertRaises(ValueError):
            ce.parallel_env(base_url="127.0.0.1:1")
        with self.assertRaises(ConnectionError):
            ce.parallel_env(base_url="http://127.0.0.1:1", instance=SMALL).reset()

    def test_vector_item_error_moves_the_others_on(self):
        # One episode gone on the server: its item fails, the other
        # episode's step is still taken and the env can go on stepping it.
        with ce.vector_env(2, base_url=URL, token=TOKEN, instance=SMALL, paradigm="centralized", seed=5) as venv:
            _, infos = venv.reset()
            before = venv.sessions[1].decision["step"]
            venv.client.batch_delete([venv.sessions[0].id])
            acts = [first_legal(infos[i], venv.agents[i]) for i in range(2)]
            with self.assertRaises(ce.ItemError):
                venv.step(acts)
            s = venv.sessions[1]
            self.assertTrue(s.decision is None or s.decision["step"] > before)
            if s.decision is not None:
                venv.sessions[0].decision = None  # the gone episode takes no more actions
                venv.step([{}, first_legal(venv.sessions[1]._infos({}), s.agents)])

    def test_reward_terms(self):
        with self.assertRaises(ValueError):
            ce.Reward({"speed": 1})
        with make(reward={"completed": 1.0, "time": -0.5}) as env:
            _, infos = env.reset(seed=3)
            total = 0.0
            while env.agents:
                _, rew, _, _, infos = env.step(first_legal(infos, env.agents))
                total += rew["plant"]
            m = env.metrics
            self.assertAlmostEqual(total, m["G_cj"] - 0.5 * m["G_mk"], places=6)


class Offline(unittest.TestCase):
    """What needs no server."""

    def test_spaces(self):
        d = ce.Discrete(4, seed=1)
        self.assertTrue(d.contains(3))
        self.assertFalse(d.contains(4))
        self.assertFalse(d.contains(True))
        self.assertEqual(d.sample([0, 0, 1, 0]), 2)
        with self.assertRaises(ValueError):
            d.sample([0, 0, 0, 0])

    def test_client_hides_token(self):
        c = ce.Client("http://127.0.0.1:1", token="secret-token")
        self.assertNotIn("secret", repr(c))


if __name__ == "__main__":
    unittest.main()


IMPATIENT_URL = os.environ.get("COORDBENCH_IMPATIENT_URL")


@unittest.skipUnless(URL and IMPATIENT_URL, "COORDBENCH_URL and COORDBENCH_IMPATIENT_URL are not set")
class Impatient(unittest.TestCase):
    """A server whose long-poll ends before most decisions are ready
    answers creates with no decision and steps with 202: the environments
    ask again, and see exactly what they see on a patient server."""

    def test_parallel_env_waits(self):
        for paradigm in ("centralized", "holonic_hybrid"):
            with make(paradigm=paradigm) as env:
                want, _ = play(env, 3, lambda e, i: first_legal(i, e.agents))
            with ce.parallel_env(base_url=IMPATIENT_URL, token=TOKEN, instance=SMALL, paradigm=paradigm) as env:
                got, infos = play(env, 3, lambda e, i: first_legal(i, e.agents))
            self.assertEqual(got, want, paradigm)
            self.assertTrue(all(i.get("metrics") for i in infos.values()))

    def test_vector_env_waits(self):
        with ce.vector_env(3, base_url=IMPATIENT_URL, token=TOKEN, instance=SMALL, paradigm="hierarchical", seed=5) as venv:
            obs, infos = venv.reset()
            self.assertEqual(len(obs), 3)
            self.assertTrue(all(o for o in obs))
            for _ in range(100000):
                if all(venv.done):
                    break
                acts = [first_legal(infos[i], venv.agents[i]) if not venv.done[i] else {} for i in range(3)]
                obs, rew, term, trunc, infos = venv.step(acts)
            self.assertTrue(all(m is not None for m in venv.metrics))
