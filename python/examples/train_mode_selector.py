#!/usr/bin/env python3
"""Learn online which authority mode should route each work item, then
compare the learned selector with the fixed paradigms and the rule-based
adaptive one on the instance's test seeds.

    coordbench des serve-socket --socket /tmp/cb.sock \\
        --paradigm-file examples/paradigms/adaptive_agent.yaml \\
        --paradigm-file examples/paradigms/adaptive.yaml &
    PYTHONPATH=python python3 python/examples/train_mode_selector.py --socket /tmp/cb.sock

(or, over HTTP, ``coordbench des serve --token-env CB_TOKEN`` with the same
paradigm files and ``--url``). Training is bounded by episodes
(--episodes, 1000), so a run prints the same table on any machine and
either transport; --minutes adds a time limit, which makes runs differ.

The paradigm adaptive_agent lets an agent, "mode_selector", choose the
mode of every work item when its routing starts (options: centralized,
hierarchical, heterarchical_cnp, holonic_hybrid). This script plays that
agent only (``play=["mode_selector"]``); the server's rule controller
plays every plant, area and cell decision. The learner is a tabular
Q-function over a few discretized features of the decision's mode_state
(power headroom, WIP load, slack, a capable cell down, a re-route, recent
rejections), trained by every-visit Monte Carlo on the discounted return
from each choice, with epsilon-greedy exploration, on seeds 100000,
100001, ... (never the test seeds). The reward is the environment's
default: minus the tardiness of the jobs completed between two choices,
and at the end minus the overdue debt of the unfinished ones, so that an
episode's return is -(G_td + G_ut).

Evaluation plays the greedy selector on every test seed and, on the same
seeds and server, the four fixed paradigms and the rule-based adaptive
paradigm played wholly by the server's rule controller (``play=[]``), and
prints the mean and standard deviation of the metric families. Standard
library only.
"""

import argparse
import math
import os
import random
import sys
import time

import coordbench_env as ce

SELECTOR = "mode_selector"
FIXED = ("centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid")
COLUMNS = ("G_mk", "G_td", "G_cj", "G_vc", "G_en", "G_ds", "G_cm", "G_fb", "G_tr")


def bucket(x, edges):
    """The index of the first edge x is below (len(edges) when none)."""
    for i, e in enumerate(edges):
        if x < e:
            return i
    return len(edges)


def state_key(view):
    """The discretized mode_state of a select_mode view (docs/paradigms.md,
    "Features")."""
    ms = (view.get("context") or {}).get("mode_state") or {}
    g = lambda k: float(ms.get(k) or 0.0)  # noqa: E731
    return (bucket(g("power_headroom"), (0.1, 0.3)),
            bucket(g("wip_load"), (0.5, 0.8)),
            bucket(g("slack"), (0.0, 300.0)),
            int(g("capable_cells_down") > 0),
            int(g("reroute") > 0),
            bucket(g("recent_rejections"), (1, 3)))


class QSelector:
    """Q(state, option) by every-visit Monte Carlo; unseen pairs are 0,
    which is optimistic (rewards are never positive), so that each option
    is tried in each state."""

    def __init__(self, n_options, alpha_min=0.05):
        self.n = n_options
        self.q, self.visits = {}, {}
        self.alpha_min = alpha_min

    def values(self, s):
        return self.q.setdefault(s, [0.0] * self.n)

    def act(self, view, rng=None, epsilon=0.0):
        legal = view["legal_actions"]
        if rng is not None and rng.random() < epsilon:
            return rng.choice(legal)
        q = self.values(state_key(view))
        return max(legal, key=lambda a: (q[a], -a))  # ties to the lowest index

    def update(self, s, a, g):
        q = self.values(s)
        n = self.visits[(s, a)] = self.visits.get((s, a), 0) + 1
        q[a] += max(1.0 / n, self.alpha_min) * (g - q[a])


def environments(args, n, paradigm, play):
    """vector_env(n) over the transport the arguments name: the unix
    socket of des serve-socket (--socket; with the payloads, which hold the
    views this learner reads) or des serve's HTTP (--url)."""
    kw = dict(instance=args.instance, paradigm=paradigm, play=play, others="rule")
    if args.socket:
        return ce.vector_env(n, socket=args.socket, payloads=True, **kw)
    return ce.vector_env(n, base_url=args.url, token=args.token, **kw)


def train(args, sel):
    rng = random.Random(args.train_seed)
    deadline = None if args.minutes is None else time.time() + 60 * args.minutes
    episodes = decisions = 0
    seed = args.first_train_seed
    t0 = time.time()
    with environments(args, args.envs, args.paradigm, [SELECTOR]) as venv:
        while episodes < args.episodes and (deadline is None or time.time() < deadline):
            progress = episodes / args.episodes
            if deadline is not None:
                progress = max(progress, min(1.0, (time.time() - t0) / (60 * args.minutes)))
            epsilon = args.epsilon * (1 - progress) + args.epsilon_min * progress
            obs, infos = venv.reset(seed=seed)
            seed += args.envs
            trajs = [[] for _ in range(args.envs)]  # [state, option, reward] per choice
            while not all(venv.done):
                acts = []
                for i in range(args.envs):
                    if venv.done[i]:
                        acts.append({})
                        continue
                    view = obs[i][SELECTOR]["payload"]
                    a = sel.act(view, rng, epsilon)
                    trajs[i].append([state_key(view), a, 0.0])
                    acts.append({SELECTOR: a})
                obs, rew, term, trunc, infos = venv.step(acts)
                for i in range(args.envs):
                    if rew[i]:  # empty for an environment that had already ended
                        trajs[i][-1][2] = rew[i][SELECTOR]
            for traj in trajs:
                g = 0.0
                for s, a, r in reversed(traj):
                    g = r + args.gamma * g
                    sel.update(s, a, g)
                decisions += len(traj)
            episodes += args.envs
            ret = sum(sum(r for _, _, r in t) for t in trajs) / len(trajs)
            print(f"  trained {episodes:4d} episodes, {decisions} choices, epsilon {epsilon:.2f}, "
                  f"mean return {ret:.0f}", file=sys.stderr, flush=True)
    return episodes, decisions, time.time() - t0


def evaluate_selector(sel, seeds, args):
    """The greedy selector on every seed: the metrics and the options chosen."""
    chosen = [0] * sel.n
    with environments(args, len(seeds), args.paradigm, [SELECTOR]) as venv:
        obs, infos = venv.reset(seeds=seeds)
        while not all(venv.done):
            acts = []
            for i in range(len(seeds)):
                if venv.done[i]:
                    acts.append({})
                    continue
                a = sel.act(obs[i][SELECTOR]["payload"])
                chosen[a] += 1
                acts.append({SELECTOR: a})
            obs, rew, term, trunc, infos = venv.step(acts)
        return list(venv.metrics), chosen


def evaluate_server(paradigm, seeds, args):
    """The paradigm played wholly by the server's rule controller."""
    with environments(args, len(seeds), paradigm, []) as venv:
        venv.reset(seeds=seeds)
        return list(venv.metrics)


def mean_sd(xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd


def table(results):
    lines = ["| selector | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name, rows in results:
        cells = []
        for c in COLUMNS:
            m, sd = mean_sd([float(r[c]) for r in rows])
            cells.append(f"{m:.1f} ± {sd:.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", help="des serve-socket's unix socket (the fast local transport); else --url")
    ap.add_argument("--url", default="http://127.0.0.1:8765", help="des serve root")
    ap.add_argument("--token-env", default="CB_TOKEN", help="environment variable holding the bearer token")
    ap.add_argument("--instance", default="A3C9-1")
    ap.add_argument("--paradigm", default="adaptive_agent", help="the paradigm whose mode_selector is learned")
    ap.add_argument("--adaptive", default="adaptive", help="the rule-based adaptive paradigm to compare with")
    ap.add_argument("--episodes", type=int, default=1000, help="training episodes (the budget)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="also stop training after this many minutes (runs then differ by machine)")
    ap.add_argument("--envs", type=int, default=8, help="episodes stepped per request while training")
    ap.add_argument("--gamma", type=float, default=0.97, help="discount per choice")
    ap.add_argument("--epsilon", type=float, default=0.3, help="exploration at the start (decays linearly)")
    ap.add_argument("--epsilon-min", type=float, default=0.02, help="exploration at the end of the budget")
    ap.add_argument("--train-seed", type=int, default=1, help="seed of the learner's exploration")
    ap.add_argument("--first-train-seed", type=int, default=100000, help="episode seeds of training start here")
    ap.add_argument("--test-seeds", default="11,12,13,14,15,16,17,18,19,20",
                    help="evaluation seeds (default: A3C9-1's test seeds)")
    args = ap.parse_args()
    if args.episodes < 1:
        ap.error("--episodes: give at least 1")
    args.token = os.environ.get(args.token_env) or None
    seeds = [int(s) for s in args.test_seeds.split(",") if s]
    if not seeds:
        ap.error("--test-seeds: give at least one seed")
    if max(seeds) >= args.first_train_seed:  # training seeds count up from --first-train-seed
        ap.error("--first-train-seed: must be above every test seed (training never plays a test seed)")

    # The number of options is the server's (the episode's "offer").
    with environments(args, 1, args.paradigm, [SELECTOR]) as env:
        env.reset(seed=args.first_train_seed)
        offer = env.offer
        sel = QSelector(len(offer))
    episodes, decisions, secs = train(args, sel)
    print(f"training: {episodes} episodes, {decisions} mode choices in {secs:.0f}s "
          f"({decisions / max(secs, 1e-9):.0f} choices/s, {args.envs} envs per request), "
          f"{len(sel.q)} states seen")

    t0 = time.time()
    learned, chosen = evaluate_selector(sel, seeds, args)
    results = [("learned (greedy Q)", learned)]
    for p in FIXED + (args.adaptive,):
        results.append((p + " (rule)", evaluate_server(p, seeds, args)))
    print(f"evaluation: {time.time() - t0:.0f}s")
    print(f"\n{args.instance}, test seeds {args.test_seeds}: mean ± sd over {len(seeds)} episodes; "
          f"every plant, area and cell decision by the rule controller\n")
    print(table(results))
    wins = [f"{name.split()[0]} {sum(1 for a, b in zip(learned, rows) if a['G_td'] < b['G_td'])}"
            for name, rows in results[1:]]
    print(f"\nseeds (of {len(seeds)}, paired) where the learned selector's G_td is lower than: " + ", ".join(wins))
    total = sum(chosen) or 1
    print("the learned selector chose: " + ", ".join(f"{m} {100 * n / total:.0f}%" for m, n in zip(offer, chosen)))


if __name__ == "__main__":
    main()
