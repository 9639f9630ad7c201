"""What standard tooling touches before reset (issue 29, item 3:
PettingZoo's parallel_api_test begins with hasattr(env,
"possible_agents")), and the client's hygiene (item 5): a misspelled agent
in step(actions) is an error, GET /v1/episodes and the cleanup helper.

Needs COORDBENCH_URL (see test_env.py).
"""

import os
import unittest

import coordbench_env as ce
from coordbench_env.gantt import text_gantt

URL = os.environ.get("COORDBENCH_URL")
TOKEN = os.environ.get("COORDBENCH_TOKEN")
SMALL = "gen:A2C4J6"


def make(**kw):
    return ce.parallel_env(base_url=URL, token=TOKEN, instance=SMALL, **kw)


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class BeforeReset(unittest.TestCase):
    def test_spaces_before_reset(self):
        with make(paradigm="holonic_hybrid", seed=3) as env:
            self.assertTrue(hasattr(env, "possible_agents"))
            agents = env.possible_agents
            self.assertEqual(agents[0], "plant")
            self.assertEqual(env.max_num_agents, len(agents))
            self.assertIs(env.unwrapped, env)
            self.assertEqual(set(env.action_spaces), set(agents))
            self.assertEqual(set(env.observation_spaces), set(agents))
            before = {a: (env.action_space(a).n, env.observation_space(a)["vector"].shape) for a in agents}
            self.assertIsNone(env.episode_id)  # nothing held on the server
            obs, infos = env.reset(seed=3)
            self.assertEqual(env.possible_agents, agents)
            self.assertEqual({a: (env.action_space(a).n, env.observation_space(a)["vector"].shape) for a in agents},
                             before)
            for a in agents:
                self.assertTrue(env.observation_space(a).contains(obs[a]))

    def test_probe_holds_nothing(self):
        client = ce.Client(URL, TOKEN)
        held = {e["id"] for e in client.episodes()}
        with make(paradigm="centralized") as env:
            env.possible_agents
            self.assertEqual({e["id"] for e in client.episodes()}, held)

    def test_gym_spaces_before_reset(self):
        with ce.gym_env(base_url=URL, token=TOKEN, instance=SMALL) as env:
            self.assertGreaterEqual(env.action_space.n, 2)
            self.assertIs(env.unwrapped, env)


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class AEC(unittest.TestCase):
    def test_aec_plays_the_parallel_episode(self):
        for paradigm in ("centralized", "holonic_hybrid"):
            with self.subTest(paradigm=paradigm):
                with make(paradigm=paradigm) as par:
                    obs, infos = par.reset(seed=4)
                    par_return, steps = 0.0, 0
                    while par.agents:
                        acts = {a: i["action_mask"].index(1) for a, i in infos.items() if i["active"]}
                        obs, rew, term, trunc, infos = par.step(acts)
                        par_return += rew["plant"]
                        steps += 1
                    par_metrics = {k: par.metrics[k] for k in ce.PRIMARY_METRICS + ("status",)}
                with ce.aec_env(base_url=URL, token=TOKEN, instance=SMALL, paradigm=paradigm) as env:
                    self.assertTrue(env.possible_agents)  # before reset too
                    env.reset(seed=4)
                    aec_return, turns, seen_end = 0.0, 0, set()
                    for agent in env.agent_iter(100000):
                        obs, reward, term, trunc, info = env.last()
                        if agent == "plant":
                            aec_return += reward
                        if term or trunc:
                            seen_end.add(agent)
                            env.step(None)
                            continue
                        self.assertTrue(info["active"], agent)  # only agents with a decision get turns
                        self.assertEqual(obs["payload"]["legal_actions"][0], info["action_mask"].index(1))
                        env.step(info["action_mask"].index(1))
                        turns += 1
                    self.assertEqual(env.agents, [])
                    self.assertEqual(seen_end, set(env.possible_agents))
                    self.assertGreaterEqual(turns, steps)
                    self.assertEqual({k: env.parallel_env.metrics[k] for k in par_metrics}, par_metrics)
                    self.assertAlmostEqual(aec_return, par_return)


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class ClientHygiene(unittest.TestCase):
    def test_misspelled_agent_is_an_error(self):
        with make(paradigm="centralized", seed=1) as env:
            _, infos = env.reset()
            legal = infos["plant"]["action_mask"].index(1)
            with self.assertRaises(KeyError) as cm:
                env.step({"plnat": legal})
            self.assertIn("plnat", str(cm.exception))
            env.step({"plant": legal})  # nothing was sent: the decision is still there

    def test_failed_create_names_no_blank_id(self):
        env = ce.parallel_env(base_url=URL, token=TOKEN, instance="no-such-instance")
        with self.assertRaises(ce.ItemError) as cm:
            env.reset(seed=1)
        self.assertIn("episode (not created)", str(cm.exception))
        self.assertNotIn("episode :", str(cm.exception))

    def test_list_and_cleanup(self):
        client = ce.Client(URL, TOKEN)
        env = make(paradigm="centralized", seed=1)
        env.reset()  # a learner that dies without close()
        eid = env.episode_id
        self.assertIn(eid, {e["id"] for e in client.episodes()})
        self.assertEqual(client.call("GET", "/v1/episodes"), {"episodes": client.episodes()})
        self.assertEqual(client.cleanup([eid]), [eid])
        self.assertNotIn(eid, {e["id"] for e in client.episodes()})


class Gantt(unittest.TestCase):
    TRACE = [
        '{"t": 0, "ev": "episode_start"}',
        '{"t": 0, "ev": "setup_start", "job": 1, "op": 0, "cell": "C1", "machine": 0}',
        '{"t": 2, "ev": "setup_complete", "job": 1, "op": 0, "cell": "C1", "machine": 0}',
        '{"t": 2, "ev": "process_start", "job": 1, "op": 0, "cell": "C1", "machine": 0}',
        '{"t": 6, "ev": "finish", "job": 1, "op": 0, "cell": "C1", "machine": 0}',
        '{"t": 7, "ev": "transport_start", "job": 1, "op": 1, "from": "C1", "from_machine": 0, "dur": 1, "cell": "C2"}',
        '{"t": 8, "ev": "breakdown", "cell": "C1", "machine": 0}',
        '{"t": 9, "ev": "process_start", "job": 1, "op": 1, "cell": "C2", "machine": 1}',
        '{"t": 10, "ev": "repair", "cell": "C1", "machine": 0}',
        '{"t": 10, "ev": "episode_end", "status": "done"}',
    ]

    def test_machine_rows(self):
        rows = text_gantt(self.TRACE, width=10).splitlines()
        self.assertEqual(rows[1:], ["C1/0 |ss####b.XX|", "C2/1 |.........#|"])
        self.assertIn("t=0 … 10", rows[0])

    def test_nothing_yet(self):
        self.assertEqual(text_gantt(['{"t": 0, "ev": "episode_start"}']), "(no machine activity yet)")


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class Render(unittest.TestCase):
    def test_render_draws_the_gantt_at_the_end(self):
        with make(paradigm="centralized") as env:
            _, infos = env.reset(seed=3)
            self.assertIn("plant:release", env.render())
            while env.agents:
                _, _, _, _, infos = env.step({a: i["action_mask"].index(1) for a, i in infos.items() if i["active"]})
            text = env.render(width=40)
        rows = [r for r in text.splitlines() if r.endswith("|")]
        self.assertTrue(rows, text)
        self.assertTrue(all(len(r.split("|")[1]) == 40 for r in rows), text)
        self.assertIn("#", text)


if __name__ == "__main__":
    unittest.main()
