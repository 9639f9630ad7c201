"""Playing some agents (``play``/``others``), the mode selector and summary
views, against a live des serve (des/envserver's TestPythonEnv starts one
with the paradigms of examples/paradigms/adaptive.yaml, adaptive_agent.yaml
and holonic_summary.yaml).

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


MODES = ["centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid"]


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class ModeSelector(unittest.TestCase):
    """adaptive_agent (examples/paradigms/adaptive_agent.yaml): the
    mode_selector chooses each work item's mode among four."""

    def test_selector_view_and_vector(self):
        with make(paradigm="adaptive_agent", play=["mode_selector"]) as env:
            obs, infos = env.reset(seed=5)
            self.assertEqual(env.possible_agents, ["mode_selector"])
            self.assertEqual(env.offer, MODES)
            self.assertEqual(env.action_space("mode_selector").n, 4)
            length = env.observation_space("mode_selector")["vector"].shape[0]
            self.assertEqual(length, features.vector_length("mode_selector", env.layout, MODES))
            steps = 0
            while env.agents:
                o, info = obs["mode_selector"], infos["mode_selector"]
                view, vec = o["payload"], o["vector"]
                self.assertEqual((view["kind"], view["role"], info["kind"]), ("select_mode", "selector", "select_mode"))
                self.assertEqual(info["action_mask"], [1, 1, 1, 1])
                self.assertEqual([opt["mode"]["mode_id"] for opt in view["options"]], MODES)
                self.assertTrue(env.observation_space("mode_selector").contains(o))
                # kind one-hot, then the role block: the 12 mode_state features
                one_hot = [1.0 if k == "select_mode" else 0.0 for k in features.KINDS]
                self.assertEqual(vec[:len(features.KINDS)], one_hot)
                at = features.COMMON + features.WORK_ITEM
                ms = view["context"]["mode_state"]
                self.assertEqual(vec[at:at + 12], [float(ms[k]) for k in features.MODE_FEATURES])
                # each option: legal, the action code of "mode", the routing one-hot and accept_reject
                opts = vec[length - features.OPTION * 4:]
                for i, mode in enumerate(MODES):
                    f = opts[i * features.OPTION:(i + 1) * features.OPTION]
                    self.assertEqual(f[:2], [1.0, float(features.ACTIONS.index("mode") + 1)])
                    self.assertEqual(f[2:6], [1.0 if j == i else 0.0 for j in range(4)])
                    rejects = view["options"][i]["mode"]["cell_contract_actions"] == "accept_reject"
                    self.assertEqual(f[6], 1.0 if rejects else 0.0)
                obs, rew, term, trunc, infos = env.step({"mode_selector": steps % 4})  # every mode in turn
                steps += 1
            m = env.metrics
            self.assertEqual(m["G_fb"], 0)
            self.assertEqual(m["secondary"]["decisions_by_source"].get("external"), steps)
            self.assertGreater(m["G_ds"], steps)

    def test_option_zero_is_what_the_rule_answers(self):
        """The built-in controllers answer select_mode with option 0: a
        selector that always says 0 plays the server's own episode."""
        with make(paradigm="adaptive_agent", play=["mode_selector"]) as env:
            obs, infos = env.reset(seed=6)
            while env.agents:
                obs, rew, term, trunc, infos = env.step({"mode_selector": 0})
            mine = env.metrics
        with make(paradigm="adaptive_agent", play=[]) as env:
            env.reset(seed=6)
            theirs = env.metrics
        for k in ("G_mk", "G_td", "G_cj", "G_ds", "G_cm", "G_vc"):
            self.assertEqual(mine[k], theirs[k], k)

    def test_illegal_choice_falls_back(self):
        with make(paradigm="adaptive_agent", play=["mode_selector"]) as env:
            obs, infos = env.reset(seed=7)
            obs, rew, term, trunc, infos = env.step({"mode_selector": 9})
            self.assertIn("not legal", infos["mode_selector"]["problem"])
            while env.agents:
                obs, rew, term, trunc, infos = env.step({"mode_selector": 1})
            self.assertEqual(env.metrics["G_fb"], 1)

    def test_every_agent_without_play(self):
        with make(paradigm="adaptive_agent") as env:
            obs, infos = env.reset(seed=5)
            agents = env.possible_agents
            self.assertEqual(agents[0], "plant")
            self.assertEqual(agents[-1], "mode_selector")
            self.assertTrue(any(a.startswith("area:") for a in agents) and any(a.startswith("cell:") for a in agents))
            kinds = {}
            while env.agents:
                for a in env.agents:
                    if infos[a]["active"]:
                        kinds.setdefault(a.split(":")[0], set()).add(infos[a]["kind"])
                obs, rew, term, trunc, infos = env.step(first_legal(infos, env.agents))
            self.assertEqual(kinds["mode_selector"], {"select_mode"})
            self.assertIn("release", kinds["plant"])
            self.assertEqual(env.metrics["G_fb"], 0)


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class SummaryViews(unittest.TestCase):
    def test_cell_vectors_read_machine_states(self):
        """holonic_summary is holonic_hybrid with summary views: the same
        episode, and the same cell vectors (their machine counts come from
        machine_states)."""
        full, summ = make(paradigm="holonic_hybrid"), make(paradigm="holonic_summary")
        try:
            (fo, fi), (so, si) = full.reset(seed=2), summ.reset(seed=2)
            cells = 0
            while full.agents:
                self.assertEqual(full.agents, summ.agents)
                for a in full.agents:
                    self.assertEqual(len(fo[a]["vector"]), len(so[a]["vector"]))
                    if a.startswith("cell:") and fi[a]["active"]:
                        self.assertIn("machine_states", so[a]["payload"]["observation"]["cell"])
                        self.assertEqual(fo[a]["vector"], so[a]["vector"], a)
                        cells += 1
                acts = first_legal(fi, full.agents)
                fo, _, _, _, fi = full.step(acts)
                so, _, _, _, si = summ.step(acts)
            self.assertGreater(cells, 0)
            self.assertEqual(full.metrics["G_td"], summ.metrics["G_td"])
        finally:
            full.close()
            summ.close()


if __name__ == "__main__":
    unittest.main()
