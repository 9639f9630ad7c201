"""Playing some agents (``play``/``others``) and the mode selector, against a
live des serve (des/envserver's TestPythonEnv starts one with the
paradigms of examples/paradigms/adaptive.yaml and adaptive_agent.yaml).

Without COORDBENCH_URL the tests are skipped.
"""

import os
import unittest

import coordbench_env as ce
from coordbench_env import features

URL = os.environ.get("COORDBENCH_URL")
TOKEN = os.environ.get("COORDBENCH_TOKEN")
SMALL = "gen:A2C4J6"


def make(**kw):
    kw.setdefault("instance", SMALL)
    return ce.parallel_env(base_url=URL, token=TOKEN, **kw)


def first_legal(infos, agents):
    return {a: infos[a]["action_mask"].index(1) for a in agents if infos[a]["active"]}


def run(env, seed, policy=first_legal):
    """Plays an episode; returns the number of steps the client saw and the
    kinds it was shown."""
    obs, infos = env.reset(seed=seed)
    steps, kinds = 0, set()
    while env.agents:
        for a in env.agents:
            if infos[a]["active"]:
                kinds.add(infos[a]["kind"])
        obs, rew, term, trunc, infos = env.step(policy(infos, env.agents))
        steps += 1
    return steps, kinds


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class Play(unittest.TestCase):
    def test_play_the_plant_only(self):
        with make(paradigm="holonic_hybrid", play=["plant"]) as env:
            obs, infos = env.reset(seed=4)
            self.assertEqual(env.possible_agents, ["plant"])
            self.assertEqual(env.action_space("plant").n, features.action_count("plant", env.layout))
            steps = 0
            while env.agents:
                self.assertEqual(env.agents, ["plant"])
                self.assertTrue(infos["plant"]["active"])  # the server never shows a decision without it
                self.assertEqual(set(env.state()["active_agents"]), {"plant"})
                self.assertTrue(env.observation_space("plant").contains(obs["plant"]))
                obs, rew, term, trunc, infos = env.step(first_legal(infos, env.agents))
                steps += 1
            m = env.metrics
            self.assertEqual(m["controller"], "http+rule")
            self.assertEqual(m["G_fb"], 0)
            by_source = m["secondary"]["decisions_by_source"]
            self.assertGreater(by_source.get("builtin", 0), 0)  # the areas' and cells' decisions
            self.assertEqual(by_source.get("external", 0), steps)
            self.assertGreater(m["G_ds"], steps)

    def test_vector_and_gym_with_play(self):
        with ce.vector_env(2, base_url=URL, token=TOKEN, instance=SMALL, paradigm="hierarchical", seed=7,
                           play=["plant"], others="greedy") as venv:
            obs, infos = venv.reset()
            self.assertEqual([list(o) for o in obs], [["plant"], ["plant"]])
            while not all(venv.done):
                acts = [first_legal(infos[i], venv.agents[i]) if not venv.done[i] else {} for i in range(2)]
                obs, rew, term, trunc, infos = venv.step(acts)
            self.assertEqual([m["controller"] for m in venv.metrics], ["http+greedy"] * 2)
        with ce.gym_env(base_url=URL, token=TOKEN, instance=SMALL, paradigm="hierarchical", play=["plant"],
                        seed=7) as env:
            obs, info = env.reset()
            while True:
                obs, r, term, trunc, info = env.step(info["action_mask"].index(1))
                if term or trunc:
                    break
            self.assertTrue(term)
            self.assertEqual(info["metrics_json"]["controller"], "http+rule")

    def test_play_nobody(self):
        """An empty play: the server plays the whole episode; the client
        gets its metrics at reset."""
        with make(paradigm="centralized", play=[], others="rule") as env:
            obs, infos = env.reset(seed=3)
            self.assertEqual((obs, infos, env.agents, env.possible_agents), ({}, {}, [], []))
            self.assertEqual(env.metrics["controller"], "http+rule")
            self.assertEqual(env.metrics["status"], "done")
        with ce.vector_env(2, base_url=URL, token=TOKEN, instance=SMALL, paradigm="centralized", seed=3,
                           play=[]) as venv:
            venv.reset()
            self.assertTrue(all(venv.done))
            self.assertEqual(venv.metrics[0]["G_mk"], env.metrics["G_mk"])  # seed 3 both

    def test_play_refused(self):
        with self.assertRaises(ce.ItemError) as cm:
            make(paradigm="centralized", play=["area:nowhere"]).reset()
        self.assertEqual(cm.exception.code, 400)
        self.assertIn("area:nowhere", str(cm.exception))
        with self.assertRaises(ce.ItemError):
            make(paradigm="centralized", play=["plant"], others="oracle").reset()
        with self.assertRaises(ValueError):
            make(others="rule")
        with self.assertRaises(TypeError):
            make(play="plant")
        with self.assertRaises(ValueError):
            ce.gym_env(base_url=URL, token=TOKEN, play=["plant", "area:A1"])


if __name__ == "__main__":
    unittest.main()
