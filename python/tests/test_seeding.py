"""Seeding as Gymnasium does it (issue 29, item 2): a seedless reset
starts a new episode on a fresh training seed drawn from the generator the
first seed seeded, never a held-out test seed; infos name the seed played;
the vector environment the same, per sub-environment.

Needs COORDBENCH_URL (see test_env.py).
"""

import os
import unittest

import coordbench_env as ce
from coordbench_env.seeding import TRAIN_LOW, SeedStream

URL = os.environ.get("COORDBENCH_URL")
TOKEN = os.environ.get("COORDBENCH_TOKEN")
SMALL = "gen:A2C4J6"


def seed_of(infos):
    seeds = {i["seed"] for i in infos.values()}
    assert len(seeds) == 1, seeds
    return seeds.pop()


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class Seeding(unittest.TestCase):
    def played(self, env, resets):
        out = []
        for seed in resets:
            obs, infos = env.reset(seed=seed)
            out.append((seed_of(infos), {a: o["vector"] for a, o in obs.items()}))
            self.assertEqual(env._session.seed, out[-1][0])  # the seed the server played
        return out

    def test_seedless_resets_draw_fresh_training_seeds(self):
        with ce.parallel_env(base_url=URL, token=TOKEN, instance=SMALL, paradigm="centralized", seed=7) as env:
            got = self.played(env, [None, None, None, 7, None])
        seeds = [s for s, _ in got]
        self.assertEqual(seeds[0], 7)  # the constructor's seed first
        self.assertEqual(len(set(seeds[:3])), 3, seeds)  # then new episodes, not a replay
        self.assertTrue(all(s >= TRAIN_LOW for s in seeds[1:3]), seeds)  # never a test seed
        self.assertEqual(got[3], got[0])  # an explicit seed replays its episode
        self.assertEqual(seeds[4], seeds[1])  # and reseeds the generator
        with ce.parallel_env(base_url=URL, token=TOKEN, instance=SMALL, paradigm="centralized", seed=7) as env:
            self.assertEqual(self.played(env, [None, None, None]), got[:3])  # reproducible

    def test_without_any_seed(self):
        with ce.parallel_env(base_url=URL, token=TOKEN, instance=SMALL, paradigm="centralized") as env:
            seeds = [s for s, _ in self.played(env, [None, None])]
        self.assertNotEqual(seeds[0], seeds[1])
        self.assertTrue(all(s >= TRAIN_LOW for s in seeds), seeds)

    def test_vector_env(self):
        with ce.vector_env(2, base_url=URL, token=TOKEN, instance=SMALL, paradigm="centralized", seed=7) as venv:
            runs = []
            for _ in range(3):
                _, infos = venv.reset()
                runs.append([seed_of(i) for i in infos])
        self.assertEqual(runs[0], [7, 8])
        fresh = runs[1] + runs[2]
        self.assertEqual(len(set(fresh)), 4, runs)
        self.assertTrue(all(s >= TRAIN_LOW for s in fresh), runs)


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class AutoReset(unittest.TestCase):
    def test_vector_env_autoresets(self):
        with ce.vector_env(2, base_url=URL, token=TOKEN, instance=SMALL, paradigm="centralized", seed=7,
                           autoreset=True) as venv:
            obs, infos = venv.reset()
            episodes = [[seed_of(i)] for i in infos]
            ended_last = [False, False]
            steps = 0
            while min(len(e) for e in episodes) < 3:
                acts = [{a: inf["action_mask"].index(1) for a, inf in infos[i].items() if inf["active"]}
                        for i in range(2)]
                obs, rew, term, trunc, infos = venv.step(acts)
                steps += 1
                self.assertLess(steps, 10000)
                for i in range(2):
                    self.assertTrue(obs[i], "an ended sub-environment must not stay empty")
                    a = next(iter(rew[i]))
                    if ended_last[i]:  # the step after an end starts a new episode
                        self.assertEqual(rew[i], {a: 0.0 for a in rew[i]})
                        self.assertFalse(term[i][a] or trunc[i][a])
                        episodes[i].append(seed_of(infos[i]))
                    ended_last[i] = term[i][a] or trunc[i][a]
        self.assertEqual([e[0] for e in episodes], [7, 8])
        later = [s for e in episodes for s in e[1:]]
        self.assertEqual(len(set(later)), len(later), episodes)  # every new episode on a new seed
        self.assertTrue(all(s >= TRAIN_LOW for s in later), episodes)


class Stream(unittest.TestCase):
    def test_bad_seed(self):
        for bad in (-1, 1.5, "3", True):
            with self.assertRaises(ValueError):
                SeedStream().next(bad)


if __name__ == "__main__":
    unittest.main()
