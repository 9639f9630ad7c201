#!/usr/bin/env python3
"""Golden data for the Go package silo/task (standard library only).

This is our own from-scratch re-implementation of the published SILO-BENCH
generator's draw order, written from the specification in
docs/silo-tasks.md (itself from the project's design notes); it is not the
upstream code. It runs on CPython's real `random` module, so comparing its
output with the Go package cross-checks the Go port of the draw order (and
of the gold answers and the Python-repr shard text) against Python itself.

Regenerate (from silo/task):

    python3 testdata/gen_official.py > testdata/official_golden.json

The output is deterministic; only the "meta" entry depends on the
interpreter. TestGoldenFileIsCurrent re-runs this script and compares
everything except "meta".

What is recorded:
  official  one entry per instance of the official stream (random.seed(42)
            once; counts 2, 5, 10, 20, 50, 100 in that order; tasks I-01 ..
            III-30 for each count), in stream order, with three SHA-256
            fingerprints:
              data: canon(shards)
              gold: canon([per_agent_values, params])
              repr: canon([str(shard) for shard in shards])
            where canon(x) = json.dumps(x, ensure_ascii=False,
            separators=(",", ":")).
  seeded    the same fingerprints for seeded instances: a fresh
            random.Random(s) per (task, n, seed), s = the first 8 bytes of
            SHA-256("silobench-task:{task}:n={n}:seed={seed}"), big-endian,
            with the top bit cleared.
  full      a few small instances in full (shards, golds, params, reprs).

Floating-point sums are written as explicit left-to-right loops starting
from the int 0, which is what built-in sum() does on CPython <= 3.11 (3.12
switched sum() of floats to compensated summation); this keeps the golden
data independent of the interpreter version.
"""

import hashlib
import json
import math
import platform
import random
import sys

COUNTS = [2, 5, 10, 20, 50, 100]


def chunk_split(data, n):
    """The published sharding rule: chunk = len // n, remainder to the last."""
    c = len(data) // n
    out = [data[i * c:(i + 1) * c] for i in range(n - 1)]
    out.append(data[(n - 1) * c:])
    return out


def fsum(xs):
    """sum() as CPython <= 3.11 does it for floats: naive, from int 0."""
    s = 0
    for x in xs:
        s = s + x
    return s


def glob(value, n):
    return [value] * n


# ---------------------------------------------------------------- Level I

def g_i01(r, n):
    data = [r.randint(-1000, 1000) for _ in range(20 * n)]
    return chunk_split(data, n), glob(max(data), n), None


WORDS = ["apple", "banana", "cherry", "date", "elderberry", "fig", "grape"]


def g_i02(r, n):
    data = [r.choice(WORDS) for _ in range(30 * n)]
    for i in range(0, len(data), 10):
        data[i] = "apple"
    gold = sum(1 for w in data if w == "apple")
    return chunk_split(data, n), glob(gold, n), None


CANDIDATES = ["Candidate_A", "Candidate_B", "Candidate_C", "Candidate_D"]


def g_i03(r, n):
    votes = [r.choice(CANDIDATES) for _ in range(25 * n)]
    winner = r.choice(CANDIDATES)
    for i in range(0, len(votes), 2):
        votes[i] = winner
    counts = {c: votes.count(c) for c in CANDIDATES}
    best = max(CANDIDATES, key=lambda c: counts[c])  # first maximum: A..D order
    return chunk_split(votes, n), glob(best, n), None


LOG_LINES = [
    "INFO: System started",
    "DEBUG: Loading config",
    "WARNING: Low memory",
    "SUCCESS: Task completed",
    "TRACE: Function called",
]


def g_i04(r, n):
    logs = [r.choice(LOG_LINES) for _ in range(15 * n)]
    has_error = r.choice([True, False])
    if has_error:
        logs[r.randint(0, len(logs) - 1)] = "ERROR: Critical failure detected"
    gold = any("ERROR" in line for line in logs)
    return chunk_split(logs, n), glob(gold, n), None


def g_i05(r, n):
    data = [r.randint(0, 1000) for _ in range(30 * n)]
    gold = sum(1 for x in data if 100 <= x <= 500)
    return chunk_split(data, n), glob(gold, n), None


def g_i06(r, n):
    data = [r.randint(0, 255) for _ in range(20 * n)]
    x = 0
    for v in data:
        x ^= v
    return chunk_split(data, n), glob(x, n), None


def g_i07(r, n):
    data = [r.uniform(0, 100) for _ in range(25 * n)]
    gold = round(fsum(data) / len(data), 2)
    return chunk_split(data, n), glob(gold, n), None


def g_i08(r, n):
    data = [r.choice(range(15 * n)) for _ in range(30 * n)]
    return chunk_split(data, n), glob(len(set(data)), n), None


def g_i09(r, n):
    data = [r.randint(1, 1000) for _ in range(30 * n)]
    return chunk_split(data, n), glob(sorted(data, reverse=True)[:10], n), None


def g_i10(r, n):
    data = [r.uniform(0, 100) for _ in range(30 * n)]
    mean = fsum(data) / len(data)
    var = fsum((x - mean) ** 2 for x in data) / len(data)
    return chunk_split(data, n), glob(round(math.sqrt(var), 2), n), None


# ---------------------------------------------------------------- Level II

def g_ii11(r, n):
    data = [r.randint(1, 50) for _ in range(15 * n)]
    pre, acc = [], 0
    for x in data:
        acc += x
        pre.append(acc)
    return chunk_split(data, n), chunk_split(pre, n), None


def g_ii12(r, n):
    a = [r.randint(1, 100) for _ in range(15 * n)]
    gold = [round((a[j] + a[j + 1] + a[j + 2]) / 3, 2) for j in range(len(a) - 2)]
    return chunk_split(a, n), glob(gold, n), None


def longest_palindrome(s):
    best = 0
    for c in range(len(s)):
        for lo, hi in ((c, c), (c, c + 1)):
            while lo >= 0 and hi < len(s) and s[lo] == s[hi]:
                lo -= 1
                hi += 1
            best = max(best, hi - lo - 1)
    return best


def g_ii13(r, n):
    letters = "abcdefghijklmnopqrstuvwxyz"
    s = [r.choice(letters) for _ in range(15 * n)]
    pos = r.randint(0, len(s) - 7)
    s[pos:pos + 7] = list("racecar")
    s = "".join(s)
    return chunk_split(s, n), glob(longest_palindrome(s), n), None


def g_ii14(r, n):
    cells = [r.randint(0, 1) for _ in range(10 * n)]
    cur = cells
    for _ in range(5):
        nxt = []
        for i in range(len(cur)):
            left = cur[i - 1] if i > 0 else 0
            right = cur[i + 1] if i + 1 < len(cur) else 0
            nxt.append(1 if left + cur[i] + right == 1 else 0)
        cur = nxt
    return chunk_split(cells, n), chunk_split(cur, n), None


def g_ii15(r, n):
    alphabet = "ABCDXYZ"
    d = [r.choice(alphabet) for _ in range(20 * n)]
    for _ in range(2):
        pos = r.randint(0, len(d) - 15)
        d[pos] = "A"
        d[pos + r.randint(1, 5)] = "B"
        d[pos + r.randint(6, 10)] = "C"
    s = "".join(d)
    count, state = 0, 0
    for ch in s:
        if state == 0 and ch == "A":
            state = 1
        elif state == 1 and ch == "B":
            state = 2
        elif state == 2 and ch == "C":
            count += 1
            state = 0
    return chunk_split(s, n), glob(count, n), None


def g_ii16(r, n):
    h = [r.randint(0, 10) for _ in range(10 * n)]
    for i in range(1, len(h) - 1, 5):
        h[i] = r.randint(0, 3)
    water = 0
    for i in range(len(h)):
        water += min(max(h[:i + 1]), max(h[i:])) - h[i]
    return chunk_split(h, n), glob(water, n), None


def g_ii17(r, n):
    a = [r.randint(1, 100) for _ in range(15 * n)]
    return chunk_split(a, n), glob([a[j + 1] - a[j] for j in range(len(a) - 1)], n), None


def g_ii18(r, n):
    m = 8 * n
    nodes = list(range(m))
    r.shuffle(nodes)  # chain order: head first
    nxt = {}
    for k in range(m):
        nxt[nodes[k]] = nodes[k + 1] if k + 1 < m else -1
    gold = {node: rank for rank, node in enumerate(nodes)}
    # The published generator shuffles the same, chain-ordered list again
    # (not a fresh id-ordered one) and builds the records in that order.
    r.shuffle(nodes)  # who holds which node
    records = [{"id": i, "next": nxt[i]} for i in nodes]
    return chunk_split(records, n), glob(gold, n), None


def g_ii19(r, n):
    a = sorted(r.randint(1, 50) for _ in range(15 * n))
    return chunk_split(a, n), glob(sorted(set(a)), n), None


def g_ii20(r, n):
    blocks = ["Block_%d_Data" % i for i in range(5 * n)]
    hashes, h = [], 0
    for b in blocks:
        h = ((sum(ord(c) for c in b) % 10000) ^ h) % 10000
        hashes.append(h)
    return chunk_split(blocks, n), chunk_split(hashes, n), None


# ---------------------------------------------------------------- Level III

def g_iii21(r, n):
    a = [r.randint(1, 1000) for _ in range(20 * n)]
    r.shuffle(a)
    return chunk_split(a, n), chunk_split(sorted(a), n), None


def g_iii22(r, n):
    a = [r.randint(1, 1000) for _ in range(25 * n)]
    r.shuffle(a)
    return chunk_split(a, n), glob(sorted(a)[len(a) // 2], n), None


def g_iii23(r, n):
    m = 10 * n
    edges = []
    for _ in range(20 * n):
        u = r.randint(0, m - 1)
        v = r.randint(0, m - 1)
        if u != v:
            edges.append((u, v))
    r.shuffle(edges)
    parent = list(range(m))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for u, v in edges:
        parent[find(u)] = find(v)
    comps = len({find(x) for x in range(m)})
    return chunk_split(edges, n), glob(comps, n), None


def g_iii24(r, n):
    m = 8 * n
    adj = [set() for _ in range(m)]
    edges = []
    for _ in range(16 * n):
        u = r.randint(0, m - 1)
        v = r.randint(0, m - 1)
        if u != v and v not in adj[u]:
            adj[u].add(v)
            adj[v].add(u)
            edges.append((u, v))
    r.shuffle(edges)
    dist = [-1] * m
    dist[0] = 0
    queue = [0]
    for x in queue:
        for y in sorted(adj[x]):
            if dist[y] < 0:
                dist[y] = dist[x] + 1
                queue.append(y)
    return chunk_split(edges, n), glob({i: dist[i] for i in range(m)}, n), None


def g_iii25(r, n):
    pts = [(r.uniform(0, 100), r.uniform(0, 100)) for _ in range(20 * n)]
    cents = [(r.uniform(0, 100), r.uniform(0, 100)) for _ in range(3)]
    r.shuffle(pts)
    clusters = [[] for _ in range(3)]
    for p in pts:  # shard order
        d = [(p[0] - c[0]) ** 2 + (p[1] - c[1]) ** 2 for c in cents]
        clusters[d.index(min(d))].append(p)
    gold = []
    for k in range(3):
        cl = clusters[k]
        if cl:
            gold.append((round(fsum(p[0] for p in cl) / len(cl), 2),
                         round(fsum(p[1] for p in cl) / len(cl), 2)))
        else:
            gold.append((round(cents[k][0], 2), round(cents[k][1], 2)))
    return chunk_split(pts, n), glob(gold, n), cents


def g_iii26(r, n):
    a = [r.choice(range(15 * n)) for _ in range(30 * n)]
    r.shuffle(a)
    return chunk_split(a, n), glob(len(set(a)), n), None


def g_iii27(r, n):
    users = [[r.uniform(0, 1) for _ in range(5)] for _ in range(3 * n)]
    items = [[r.uniform(0, 1) for _ in range(5)] for _ in range(3 * n)]
    records = [("user", i, v) for i, v in enumerate(users)]
    records += [("item", j, v) for j, v in enumerate(items)]
    r.shuffle(records)
    shards = []
    for chunk in chunk_split(records, n):
        shard = {"users": {}, "items": {}}
        for kind, ident, vec in chunk:
            shard["users" if kind == "user" else "items"][ident] = vec
        shards.append(shard)
    scores = []
    for u in range(len(users)):
        for i in range(len(items)):
            dot = fsum(a * b for a, b in zip(users[u], items[i]))
            scores.append((u, i, round(dot, 4)))
    scores.sort(key=lambda t: t[2], reverse=True)
    return shards, glob(scores[:3], n), None


def g_iii28(r, n):
    m = 8 * n
    out = [[] for _ in range(m)]
    edges = []
    for _ in range(16 * n):
        u = r.randint(0, m - 1)
        v = r.randint(0, m - 1)
        if u != v and v not in out[u]:
            out[u].append(v)
            edges.append((u, v))
    r.shuffle(edges)
    damping = 0.85
    rank = [(1 - damping) / m] * m
    for u in range(m):
        if out[u]:
            share = damping * (1 / m) / len(out[u])
            for v in out[u]:
                rank[v] += share
    return chunk_split(edges, n), glob({v: round(rank[v], 6) for v in range(m)}, n), None


def g_iii29(r, n):
    tasks = []
    for i in range(20 * n):
        d = r.randint(50, 100) if i % 10 == 0 else r.randint(1, 10)
        tasks.append({"id": i, "duration": d})
    heavy = [t for t in tasks if t["id"] % 10 == 0]
    light = [t for t in tasks if t["id"] % 10 != 0]
    if n == 1:  # our extension (the published code divides by n - 1)
        shards = [heavy + light]
    else:
        c = len(light) // (n - 1)
        shards = [heavy] + [light[k * c:(k + 1) * c] for k in range(n - 2)]
        shards.append(light[(n - 2) * c:])
    total = sum(t["duration"] for t in tasks)
    loads = [0] * n
    for t in sorted(tasks, key=lambda t: t["duration"], reverse=True):
        k = loads.index(min(loads))
        loads[k] += t["duration"]
    avg = total / n
    var = fsum((l - avg) ** 2 for l in loads) / n
    gold = {"variance": round(var, 2), "max_load": max(loads), "min_load": min(loads)}
    return shards, glob(gold, n), None


def g_iii30(r, n):
    a = [[r.randint(1, 10) for _ in range(n)] for _ in range(n)]
    b = [[r.randint(1, 10) for _ in range(n)] for _ in range(n)]
    shards = [{"type": "rows_and_full_B", "A_rows": [a[i]], "A_row_indices": [i], "B_matrix": b}
              for i in range(n)]
    c = [[sum(a[i][k] * b[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
    return shards, glob(c, n), None


GENERATORS = [
    ("I-01", g_i01), ("I-02", g_i02), ("I-03", g_i03), ("I-04", g_i04), ("I-05", g_i05),
    ("I-06", g_i06), ("I-07", g_i07), ("I-08", g_i08), ("I-09", g_i09), ("I-10", g_i10),
    ("II-11", g_ii11), ("II-12", g_ii12), ("II-13", g_ii13), ("II-14", g_ii14), ("II-15", g_ii15),
    ("II-16", g_ii16), ("II-17", g_ii17), ("II-18", g_ii18), ("II-19", g_ii19), ("II-20", g_ii20),
    ("III-21", g_iii21), ("III-22", g_iii22), ("III-23", g_iii23), ("III-24", g_iii24),
    ("III-25", g_iii25), ("III-26", g_iii26), ("III-27", g_iii27), ("III-28", g_iii28),
    ("III-29", g_iii29), ("III-30", g_iii30),
]


# ---------------------------------------------------------------- output

def canon(x):
    return json.dumps(x, ensure_ascii=False, separators=(",", ":"))


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprints(shards, golds, params):
    return {
        "data": sha(canon(shards)),
        "gold": sha(canon([golds, params])),
        "repr": sha(canon([str(s) for s in shards])),
    }


def seeded_seed(task, n, seed):
    key = "silobench-task:%s:n=%d:seed=%d" % (task, n, seed)
    d = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(d[:8], "big") & ((1 << 63) - 1)


FULL = {"I-07_n2", "II-13_n2", "II-18_n2", "III-25_n2", "III-27_n2", "III-29_n5", "III-30_n2"}
SEEDED_NS = [1, 3, 7]
SEEDED_SEEDS = [0, 1, 2**64 - 1]


def main():
    official, full = [], []
    r = random.Random(42)  # the published generator's one global stream
    for n in COUNTS:
        for task, gen in GENERATORS:
            shards, golds, params = gen(r, n)
            ident = "%s_n%d" % (task, n)
            official.append(dict(id=ident, **fingerprints(shards, golds, params)))
            if ident in FULL:
                # Round-trip through JSON so tuples and int keys read as the
                # Go side's JSON (and the file) has them; reprs are kept.
                full.append({
                    "id": ident,
                    "shards": json.loads(canon(shards)),
                    "expected": json.loads(canon(golds)),
                    "params": json.loads(canon(params)),
                    "reprs": [str(s) for s in shards],
                })
    seeded = []
    for task, gen in GENERATORS:
        for n in SEEDED_NS:
            for seed in SEEDED_SEEDS:
                rs = random.Random(seeded_seed(task, n, seed))
                shards, golds, params = gen(rs, n)
                seeded.append(dict(task=task, n=n, seed=str(seed),
                                   **fingerprints(shards, golds, params)))
    out = {
        "meta": {
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
        },
        "official": official,
        "seeded": seeded,
        "full": full,
    }
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=1))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
