#!/usr/bin/env python3
"""Train a linear policy on DESBench through des serve, then compare it with
the built-in rule controller on the instance's test seeds.

    go build -o coordbench ./cmd/coordbench
    ./coordbench des serve --token-env CB_TOKEN &
    PYTHONPATH=python python3 python/examples/train_linear.py

The learner is a linear softmax policy over per-option features (the
plant's options under the centralized paradigm: which job to release or
defer, which cell to assign), trained by REINFORCE with a per-step
baseline on the environment's default reward, −(G_td + G_ut) summed over
an episode. Training uses a vector environment (--envs episodes per HTTP
request) on seeds 100000, 100001, … (never the test seeds), for --episodes
episodes: a count, not a time, so that the same arguments give the same
policy and the same table on any machine. Evaluation
plays the greedy (argmax) policy on every test seed, a masked-random
policy on the same seeds, and the rule controller through
``coordbench des run --controller rule`` on the same seeds (exactly
paired: same instance, paradigm and seed), and prints the mean of the main
metrics. The coordbench binary is found before training (--coordbench, else
on PATH, else where the README builds it, at the repository root). Standard
library only; NumPy is not needed.
"""

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import coordbench_env as ce
from coordbench_env.features import ACTIONS, option_features

KINDS = ("release", "select_cell", "plant_fallback")
# Per-option features: option_features scaled to about 1, then an action-type one-hot.
SCALE = (1 / 100, 1 / 100, 1 / 5, 1 / 100, 1 / 3)
RELEASE_SCALE = (1 / 100, 1 / 500, 0, 0, 0)
DIM = 5 + len(ACTIONS)
COLUMNS = ("G_mk", "G_td", "G_cj", "G_vc", "G_en", "G_dj", "G_ut", "G_fb")


def phi(option, now):
    f = option_features(option, now)
    scale = RELEASE_SCALE if option.get("action") == "release" else SCALE
    x = [a * s for a, s in zip(f, scale)]
    x += [1.0 if option.get("action") == a else 0.0 for a in ACTIONS]
    return x


class LinearPolicy:
    """One weight vector per decision kind; score(option) = w · phi."""

    def __init__(self):
        self.w = {k: [0.0] * DIM for k in KINDS}

    def probs(self, view, now):
        w = self.w.get(view["kind"])
        legal = view["legal_actions"]
        feats = [phi(view["options"][i], now) for i in legal]
        if w is None:
            return legal, feats, [1.0 / len(legal)] * len(legal)
        scores = [sum(a * b for a, b in zip(w, f)) for f in feats]
        m = max(scores)
        e = [math.exp(s - m) for s in scores]
        z = sum(e)
        return legal, feats, [x / z for x in e]

    def act(self, view, now, rng=None):
        legal, feats, p = self.probs(view, now)
        if rng is None:  # greedy; ties to the lowest index
            k = max(range(len(p)), key=lambda i: (p[i], -i))
        else:
            k = rng.choices(range(len(p)), weights=p)[0]
        return legal[k], (view["kind"], feats, p, k)

    def update(self, trace, advantage, lr):
        kind, feats, p, k = trace
        w = self.w.get(kind)
        if w is None:
            return
        mean = [sum(p[j] * feats[j][d] for j in range(len(p))) for d in range(DIM)]
        for d in range(DIM):
            w[d] += lr * advantage * (feats[k][d] - mean[d])


def train(args, policy, url, token):
    rng = random.Random(args.train_seed)
    baseline = {}  # step index -> running mean of the return-to-go
    scale = None  # running mean absolute advantage
    episodes = steps = 0
    seed = 100000
    t0 = time.time()
    with ce.vector_env(args.envs, base_url=url, token=token, instance=args.instance, paradigm="centralized") as venv:
        while episodes < args.episodes:
            obs, infos = venv.reset(seed=seed)
            seed += args.envs
            trajs = [[] for _ in range(args.envs)]
            while not all(venv.done):
                acts = []
                for i in range(args.envs):
                    if venv.done[i]:
                        acts.append({})
                        continue
                    view, now = obs[i]["plant"]["payload"], infos[i]["plant"]["time"]
                    a, tr = policy.act(view, now, rng)
                    trajs[i].append([tr, 0.0])
                    acts.append({"plant": a})
                obs, rew, term, trunc, infos = venv.step(acts)
                for i in range(args.envs):
                    if rew[i]:  # empty for an environment that had already ended
                        trajs[i][-1][1] = rew[i]["plant"]
            for traj in trajs:
                g = 0.0
                rtg = []
                for tr, r in reversed(traj):
                    g += r
                    rtg.append(g)
                rtg.reverse()
                for t, ((tr, _), G) in enumerate(zip(traj, rtg)):
                    b = baseline.get(t, G)
                    baseline[t] = b + 0.1 * (G - b)
                    adv = G - b
                    scale = abs(adv) if scale is None else 0.99 * scale + 0.01 * abs(adv)
                    policy.update(tr, adv / (scale + 1e-9), args.lr)
                steps += len(traj)
            episodes += args.envs
            ret = sum(sum(r for _, r in t) for t in trajs) / len(trajs)
            print(f"  trained {episodes:4d} episodes, {steps} steps, {steps / (time.time() - t0):.0f} steps/s, "
                  f"mean return {ret:.0f}", file=sys.stderr, flush=True)
    return episodes, steps, time.time() - t0


def evaluate(policy, seeds, url, token, instance, rng=None):
    rows = []
    with ce.gym_env(base_url=url, token=token, instance=instance) as env:
        for s in seeds:
            obs, info = env.reset(seed=s)
            while True:
                if rng is None:
                    a, _ = policy.act(obs["payload"], info["time"])
                else:
                    a = env.action_space.sample(info["action_mask"])
                obs, r, term, trunc, info = env.step(a)
                if term or trunc:
                    break
            rows.append(info["metrics"])
    return rows


def rule_metrics(coordbench, instance, seeds):
    rows = []
    tmp = tempfile.mkdtemp(prefix="train-linear-")
    try:
        for s in seeds:
            out = os.path.join(tmp, f"s{s}")
            subprocess.run([coordbench, "des", "run", "--instance", instance, "--paradigm", "centralized",
                            "--controller", "rule", "--seed", str(s), "--out", out],
                           check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(out, "metrics.json")) as f:
                rows.append(json.load(f))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def find_coordbench(name):
    """The coordbench binary for the rule baseline: name if it is a path or
    on PATH, else the README's build at the repository root; None if
    there is none."""
    found = shutil.which(name)
    if found:
        return found
    if name == "coordbench":
        built = Path(__file__).resolve().parents[2] / "coordbench"
        if built.is_file() and os.access(built, os.X_OK):
            return str(built)
    return None


def table(results):
    head = "| policy | " + " | ".join(COLUMNS) + " |"
    lines = [head, "|---" * (len(COLUMNS) + 1) + "|"]
    for name, rows in results:
        means = [sum(r[c] for r in rows) / len(rows) for c in COLUMNS]
        lines.append(f"| {name} | " + " | ".join(f"{m:.1f}" for m in means) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8765", help="des serve root")
    ap.add_argument("--token-env", default="CB_TOKEN", help="environment variable holding the bearer token")
    ap.add_argument("--instance", default="A3C9-1")
    ap.add_argument("--episodes", type=int, default=1200,
                    help="training episodes (rounded up to a multiple of --envs)")
    ap.add_argument("--envs", type=int, default=8, help="episodes stepped per request while training")
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--train-seed", type=int, default=1, help="seed of the learner's sampling")
    ap.add_argument("--test-seeds", default="11,12,13,14,15,16,17,18,19,20",
                    help="evaluation seeds (default: A3C9-1's test seeds)")
    ap.add_argument("--coordbench", default="coordbench", help="the coordbench binary, for the rule baseline")
    args = ap.parse_args()
    token = os.environ.get(args.token_env) or None
    seeds = [int(s) for s in args.test_seeds.split(",") if s]
    if args.episodes < 1 or args.envs < 1:
        ap.error("--episodes and --envs must be at least 1")
    coordbench = find_coordbench(args.coordbench)
    if coordbench is None:  # found out now, not after training
        ap.error(f"--coordbench {args.coordbench}: no such executable (on PATH or, for the default, at the "
                 "repository root); build it with `go build -o coordbench ./cmd/coordbench` there, or name it")

    policy = LinearPolicy()
    episodes, steps, secs = train(args, policy, args.url, token)
    print(f"training: {episodes} episodes, {steps} decision steps in {secs:.0f}s ({steps / secs:.0f} steps/s, "
          f"{args.envs} envs per request)")
    results = [
        ("rule (des run)", rule_metrics(coordbench, args.instance, seeds)),
        ("linear (trained, greedy)", evaluate(policy, seeds, args.url, token, args.instance)),
        ("random (masked)", evaluate(policy, seeds, args.url, token, args.instance, rng=True)),
    ]
    print(f"\n{args.instance}, centralized, test seeds {args.test_seeds}: means over {len(seeds)} episodes\n")
    print(table(results))
    rule, lin = results[0][1], results[1][1]
    better = sum(1 for a, b in zip(lin, rule) if a["G_td"] < b["G_td"])
    print(f"\nlinear beats rule on G_td on {better} of {len(seeds)} seeds (paired)")


if __name__ == "__main__":
    main()
