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


def run_example(script, *args):
    """Runs an example against the live server, with its token."""
    env = dict(os.environ, CB_TEST_TOKEN=TOKEN or "")
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, script), "--url", URL,
                           "--token-env", "CB_TEST_TOKEN", *args],
                          env=env, capture_output=True, text=True, timeout=300)


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class TrainModeSelector(unittest.TestCase):
    def run_example(self, *args):
        return run_example("train_mode_selector.py", *args)

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


@unittest.skipUnless(URL, "COORDBENCH_URL is not set (start coordbench des serve)")
class TrainLinear(unittest.TestCase):
    """train_linear.py, on a tiny budget (COORDBENCH_BIN is the built CLI,
    for its rule baseline)."""

    def run_example(self, *args):
        return run_example("train_linear.py", *args)

    def test_missing_binary_fails_before_training(self):
        out = self.run_example("--episodes", "2", "--envs", "2", "--coordbench", os.path.join(EXAMPLES, "no-such-coordbench"))
        self.assertEqual(out.returncode, 2, out.stderr)
        self.assertIn("no such executable", out.stderr)
        self.assertNotIn("trained", out.stderr)  # failed before training, not after

    @unittest.skipUnless(os.environ.get("COORDBENCH_BIN"), "COORDBENCH_BIN is not set (the built coordbench)")
    def test_tiny_budget_is_reproducible(self):
        args = ("--episodes", "2", "--envs", "2", "--test-seeds", "11,12", "--coordbench", os.environ["COORDBENCH_BIN"])
        first, second = self.run_example(*args), self.run_example(*args)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn("training: 2 episodes", first.stdout)
        table = [line for line in first.stdout.splitlines() if line.startswith("| ")]
        self.assertEqual([line.split("|")[1].strip() for line in table[1:]],
                         ["rule (des run)", "linear (trained, greedy)", "random (masked)"])
        self.assertRegex(first.stdout, r"linear beats rule on G_td on [0-2] of 2 seeds")
        # Bounded by episodes, not time: the same arguments print the same table.
        self.assertEqual(table, [line for line in second.stdout.splitlines() if line.startswith("| ")])


if __name__ == "__main__":
    unittest.main()
