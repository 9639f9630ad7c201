"""The learning examples run end to end against a live des serve, with a
tiny budget (des/envserver's TestPythonEnv starts the server with the
paradigms of examples/paradigms/adaptive.yaml and adaptive_agent.yaml).

Without COORDBENCH_URL the tests are skipped.
"""

import os
import re
import subprocess
import sys
import unittest

URL = os.environ.get("COORDBENCH_URL")
TOKEN = os.environ.get("COORDBENCH_TOKEN")
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class TrainModeSelector(unittest.TestCase):
    def run_example(self, *args):
        env = dict(os.environ, CB_TEST_TOKEN=TOKEN or "")
        return subprocess.run([sys.executable, os.path.join(EXAMPLES, "train_mode_selector.py"), "--url", URL,
                               "--token-env", "CB_TEST_TOKEN", *args],
                              env=env, capture_output=True, text=True, timeout=300)

    def test_tiny_budget_prints_every_row(self):
        out = self.run_example("--episodes", "4", "--envs", "2", "--test-seeds", "11,12")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("training: 4 episodes", out.stdout)
        rows = {}
        for line in out.stdout.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| ") and cells[0] != "selector":
                rows[cells[0]] = cells[1:]
        want = ["learned (greedy Q)", "centralized (rule)", "hierarchical (rule)", "heterarchical_cnp (rule)",
                "holonic_hybrid (rule)", "adaptive (rule)"]
        self.assertEqual(list(rows), want)
        number = re.compile(r"^-?\d+\.\d ± \d+\.\d$")
        for name, cells in rows.items():
            self.assertEqual(len(cells), 9, name)  # G_mk G_td G_cj G_vc G_en G_ds G_cm G_fb G_tr
            for c in cells:
                self.assertRegex(c, number, name)
        # Every job completes on A3C9-1 whoever routes it, and nobody falls back.
        for name, cells in rows.items():
            self.assertTrue(float(cells[2].split()[0]) > 0, name)
            self.assertEqual(cells[7], "0.0 ± 0.0", name)
        self.assertRegex(out.stdout, r"the learned selector chose: centralized \d+%, hierarchical \d+%")
        self.assertRegex(out.stdout, r"paired\) where the learned selector's G_td is lower than: centralized \d+, "
                                     r"hierarchical \d+, heterarchical_cnp \d+, holonic_hybrid \d+, adaptive \d+")

    def test_test_seeds_are_never_trained_on(self):
        out = self.run_example("--episodes", "1", "--first-train-seed", "15", "--test-seeds", "11,20")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("--first-train-seed", out.stderr)


if __name__ == "__main__":
    unittest.main()
