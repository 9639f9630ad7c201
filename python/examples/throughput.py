#!/usr/bin/env python3
"""Decision steps per second from Python, and the ratio to the simulator's
own rate in process on the same episodes.

Over the unix socket of des serve-socket (the fast local transport):

    coordbench des serve-socket --socket /tmp/cb.sock &
    PYTHONPATH=python python3 python/examples/throughput.py --socket /tmp/cb.sock

each round plays pipelined_env(32, groups=2) (the server steps one group
while this process chooses the other's actions), then the same episodes
(the seeds it finished) in the server's process with no transport
(OpBench), with no trace and with the trace to memory (as des bench), then
vector_env(32) through step_arrays; all auto-reset. The ratios are the
socket rates over the in-process one, medians of the rounds; the dict API
is measured once at the end. The CPU time per decision (Python's and the
server process's; in process, the server's) hardly depends on the other
work of a shared machine, unlike steps/s: it is the figure to compare on a
busy one (run the server for this alone).

Over HTTP (des serve), the earlier measurements:

    coordbench des serve --token-env CB_TOKEN &
    PYTHONPATH=python python3 python/examples/throughput.py --url http://127.0.0.1:8765

one environment, 16 environments on 16 threads (one request per step
each), and one vector environment of 16 (one request per 16 steps).

Every policy plays the first legal action of every active agent
(centralized, A3C9-1, unless --instance and --paradigm say otherwise).
"""

import argparse
import array
import os
import statistics
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


def vector_dicts(n, seconds, **kw):
    """Steps/s of a vector environment's dict API (either transport)."""
    steps, t0 = 0, time.time()
    end = t0 + seconds
    with ce.vector_env(n, **kw) as venv:
        while time.time() < end:
            obs, infos = venv.reset(seed=1)
            while not all(venv.done) and time.time() < end:
                acts = [{a: inf["action_mask"].index(1) for a, inf in infos[i].items() if inf["active"]}
                        for i in range(n)]
                steps += sum(1 for i in range(n) if not venv.done[i])
                obs, rew, term, trunc, infos = venv.step(acts)
    return steps / (time.time() - t0)


def socket_flat(path, instance, paradigm, n, seconds, seed):
    """Steps/s of vector_env(n) over the socket through step_arrays, with
    auto-reset; the CPU time it took per step, Python's and the server's;
    and the seeds of the episodes it finished."""
    with ce.vector_env(n, socket=path, instance=instance, paradigm=paradigm, autoreset=True) as v:
        A = len(v.possible_agents)
        ms, mo, cnt = v.mask_stride, v.mask_offset, v.action_count
        acts = array.array("i", [ce.NO_ACTION] * (n * A))
        finished, steps = [], 0
        server0, py0 = v.client.cpu(), time.process_time()
        t0 = time.perf_counter()
        arr = v.reset_arrays(seed=seed)
        while time.perf_counter() - t0 < seconds:
            steps += first_legal(arr, acts, n, A, ms, mo, cnt)
            arr = v.step_arrays(acts)
            for e in arr.tail.get("ended") or ():
                finished.append(arr.seed[e["env"]])
        wall = time.perf_counter() - t0
        py, server = time.process_time() - py0, (v.client.cpu() - server0) / 1e9
        return steps / wall, (py / steps, server / steps), finished


def first_legal(arr, acts, m, A, ms, mo, cnt):
    """The policy: every active agent's first legal action (into acts)."""
    mask, active = bytes(arr.mask), bytes(arr.active)
    k = 0
    for i in range(m):
        for ai in range(A):
            if active[k]:
                base = i * ms + mo[ai]
                acts[k] = mask.find(1, base, base + cnt[ai]) - base
            k += 1
    return bytes(arr.state).count(0)


def socket_pipelined(path, instance, paradigm, n, groups, seconds, seed):
    """Steps/s of pipelined_env(n, groups): the server steps one group
    while this process chooses the next group's actions; the CPU time per
    step, Python's and the server's; the seeds of the episodes finished."""
    with ce.pipelined_env(n, groups=groups, socket=path, instance=instance, paradigm=paradigm, seed=seed) as p:
        A, m = len(p.possible_agents), p.group_size
        ms, mo, cnt = p.mask_stride, p.mask_offset, p.action_count
        acts = [array.array("i", [ce.NO_ACTION] * (m * A)) for _ in range(groups)]
        finished, steps = [], 0
        server0, py0 = p.client.cpu(), time.process_time()
        t0 = time.perf_counter()
        p.async_reset()
        while time.perf_counter() - t0 < seconds:
            g, arr = p.recv()
            for e in arr.tail.get("ended") or ():
                finished.append(arr.seed[e["env"]])
            steps += first_legal(arr, acts[g], m, A, ms, mo, cnt)
            p.send(acts[g])
        wall = time.perf_counter() - t0
        py = time.process_time() - py0
        for _ in range(groups):  # the replies still on their way: their steps were not counted
            p.recv()
        server = (p.client.cpu() - server0) / 1e9
        return steps / wall, (py / steps, server / steps), finished


def in_process(path, instance, paradigm, seeds, trace=False):
    """Decisions/s and CPU seconds per decision of the same episodes in the
    server's process."""
    c = ce.SocketClient(path)
    try:
        r = c.bench(instance, paradigm, seeds, trace=trace)
    finally:
        c.close()
    return r["decisions"] / (r["nanos"] / 1e9), r["cpu_nanos"] / 1e9 / r["decisions"]


def main():
    ap = argparse.ArgumentParser(description="decision steps per second from Python, and the ratio to in-process")
    ap.add_argument("--socket", help="des serve-socket's unix socket: measure the socket transport")
    ap.add_argument("--url", help="des serve's URL: measure the HTTP transport")
    ap.add_argument("--token-env", default="CB_TOKEN")
    ap.add_argument("--instance", default="A3C9-1")
    ap.add_argument("--paradigm", default="centralized")
    ap.add_argument("--envs", type=int, default=32, help="episodes of the socket vector environment")
    ap.add_argument("--groups", type=int, default=2, help="groups of the pipelined vector environment")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the socket side by side")
    ap.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    args = ap.parse_args()
    if not args.socket and not args.url:
        ap.error("give --socket PATH (des serve-socket) or --url URL (des serve), or both")
    print(f"numpy available: {ce.numpy_available()}")
    print("| client | steps/s | CPU µs per decision: all (Python + server) |\n|---|---|---|")
    if args.socket:
        rows = {"pipelined": [], "sync": []}
        proc, traced = [], []
        for r in range(args.rounds):
            rate, cpu, seeds = socket_pipelined(args.socket, args.instance, args.paradigm, args.envs, args.groups,
                                                args.seconds, 1000 * r + 1)
            if not seeds:
                raise SystemExit("no episode finished within --seconds; give more")
            rows["pipelined"].append((rate, cpu))
            proc.append(in_process(args.socket, args.instance, args.paradigm, seeds))
            traced.append(in_process(args.socket, args.instance, args.paradigm, seeds, trace=True))
            srate, scpu, _ = socket_flat(args.socket, args.instance, args.paradigm, args.envs, args.seconds,
                                         1000 * r + 1)
            rows["sync"].append((srate, scpu))
            print(f"| round {r + 1}: socket pipelined_env({args.envs}, groups={args.groups}) | {rate:.0f} "
                  f"| {(cpu[0] + cpu[1]) * 1e6:.2f} ({cpu[0] * 1e6:.2f} + {cpu[1] * 1e6:.2f}) |")
            print(f"| round {r + 1}: socket vector_env({args.envs}), step_arrays | {srate:.0f} "
                  f"| {(scpu[0] + scpu[1]) * 1e6:.2f} ({scpu[0] * 1e6:.2f} + {scpu[1] * 1e6:.2f}) |")
            print(f"| round {r + 1}: in process, the same {len(seeds)} episodes | {proc[-1][0]:.0f} "
                  f"| {proc[-1][1] * 1e6:.2f} |")
            print(f"| round {r + 1}: in process, trace to memory (as des bench) | {traced[-1][0]:.0f} "
                  f"| {traced[-1][1] * 1e6:.2f} |")
        d = vector_dicts(args.envs, args.seconds, socket=args.socket, instance=args.instance, paradigm=args.paradigm)
        print(f"| socket vector_env({args.envs}), dict API | {d:.0f} | |")
        med = statistics.median
        for name, label in (("pipelined", f"socket pipelined_env({args.envs}, groups={args.groups})"),
                            ("sync", f"socket vector_env({args.envs}) step_arrays")):
            vec = rows[name]
            ratios = [v[0] / p[0] for v, p in zip(vec, proc)]
            tratios = [v[0] / p[0] for v, p in zip(vec, traced)]
            cpus = [p[1] / (v[1][0] + v[1][1]) for v, p in zip(vec, proc)]
            print(f"\nratio, {label} / in process, steps/s: {med(ratios):.2f} "
                  f"(median of {len(ratios)} rounds: {', '.join(f'{x:.2f}' for x in ratios)})")
            print(f"  the same, in process with the trace to memory (des bench): {med(tratios):.2f}")
            print(f"  CPU time per decision, in process / (Python + server): {med(cpus):.2f}")
        print(f"ratio, socket vector_env({args.envs}) dict API / in process: {d / med(p[0] for p in proc):.2f}")
    if args.url:
        token = os.environ.get(args.token_env) or None
        print(f"| HTTP, 1 environment | {threads(1, args.url, token, args.instance, args.seconds):.0f} | |")
        print(f"| HTTP, 16 environments, 16 threads | {threads(16, args.url, token, args.instance, args.seconds):.0f} | |")
        for n in (16, 32):
            r = vector_dicts(n, args.seconds, base_url=args.url, token=token, instance=args.instance,
                             paradigm=args.paradigm)
            print(f"| HTTP vector_env({n}), one request per step of all {n} | {r:.0f} | |")


if __name__ == "__main__":
    main()
