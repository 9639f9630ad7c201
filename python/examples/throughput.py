#!/usr/bin/env python3
"""Decision steps per second through des serve, from Python: one
environment, 16 environments on 16 threads (one request per step each),
and one vector environment of 16 (one request per 16 steps).

    coordbench des serve --token-env CB_TOKEN &
    PYTHONPATH=python python3 python/examples/throughput.py --seconds 10

Every policy plays the first legal action (centralized, A3C9-1).
"""

import argparse
import os
import threading
import time

import coordbench_env as ce


def single(url, token, instance, seconds, seed, counter):
    end = time.time() + seconds
    with ce.gym_env(base_url=url, token=token, instance=instance) as env:
        while time.time() < end:
            obs, info = env.reset(seed=seed)
            while time.time() < end:
                obs, r, term, trunc, info = env.step(info["action_mask"].index(1))
                counter[0] += 1
                if term or trunc:
                    break


def threads(n, url, token, instance, seconds):
    counters = [[0] for _ in range(n)]
    ts = [threading.Thread(target=single, args=(url, token, instance, seconds, i + 1, counters[i])) for i in range(n)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(c[0] for c in counters) / (time.time() - t0)


def vector(n, url, token, instance, seconds):
    steps, t0 = 0, time.time()
    end = t0 + seconds
    with ce.vector_env(n, base_url=url, token=token, instance=instance) as venv:
        while time.time() < end:
            obs, infos = venv.reset(seed=1)
            while not all(venv.done) and time.time() < end:
                acts = [{} if venv.done[i] else {"plant": infos[i]["plant"]["action_mask"].index(1)} for i in range(n)]
                steps += sum(1 for a in acts if a)
                obs, rew, term, trunc, infos = venv.step(acts)
    return steps / (time.time() - t0)


def main():
    ap = argparse.ArgumentParser(description="decision steps per second through des serve, from Python")
    ap.add_argument("--url", default="http://127.0.0.1:8765")
    ap.add_argument("--token-env", default="CB_TOKEN")
    ap.add_argument("--instance", default="A3C9-1")
    ap.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    args = ap.parse_args()
    token = os.environ.get(args.token_env) or None
    print(f"numpy available: {ce.numpy_available()}")
    print("| client | steps/s |\n|---|---|")
    print(f"| 1 environment | {threads(1, args.url, token, args.instance, args.seconds):.0f} |")
    print(f"| 16 environments, 16 threads | {threads(16, args.url, token, args.instance, args.seconds):.0f} |")
    print(f"| vector_env(16), one request per step of all 16 | {vector(16, args.url, token, args.instance, args.seconds):.0f} |")


if __name__ == "__main__":
    main()
