#!/usr/bin/env python3
"""Golden data for the Go package silo/pyrand (standard library only).

Every value below is drawn from CPython's own random.Random, so the Go
emulation can be checked against it draw for draw.

Regenerate (from silo/pyrand):

    python3 testdata/gen_golden.py > testdata/golden.json

The output is deterministic; only the "meta" entry depends on the interpreter
that ran the script. TestGoldenFileIsCurrent re-runs this script and compares
everything except "meta".
"""

import json
import math
import platform
import random
import sys

SEEDS = [42, 0, 1, 12345, -7, 2**40 + 3]
BITS = [1, 7, 32, 33, 53, 64]
CHOICE_LENGTHS = [1, 2, 7, 1000]
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def per_seed(seed):
    """Fixed sections; each section starts from a freshly seeded generator."""

    def fresh():
        return random.Random(seed)

    out = {"seed": seed}
    r = fresh()
    version, state, gauss_next = r.getstate()
    assert version == 3 and gauss_next is None and len(state) == 625
    out["state"] = list(state)

    r = fresh()
    out["random"] = [r.random() for _ in range(20)]

    r = fresh()  # one generator for all widths, in this order
    out["getrandbits"] = {str(k): [r.getrandbits(k) for _ in range(20)] for k in BITS}

    r = fresh()
    out["randint_pm1000"] = [r.randint(-1000, 1000) for _ in range(50)]
    r = fresh()
    out["randint_0_255"] = [r.randint(0, 255) for _ in range(50)]
    r = fresh()
    out["randrange_0_1e6"] = [r.randrange(0, 10**6) for _ in range(30)]

    r = fresh()  # one generator for all lengths, in this order
    out["choice"] = {str(n): [r.choice(range(n)) for _ in range(20)] for n in CHOICE_LENGTHS}

    r = fresh()
    x = list(range(37))
    r.shuffle(x)
    out["shuffle37"] = x

    r = fresh()
    out["uniform_0_100"] = [r.uniform(0, 100) for _ in range(20)]

    r = fresh()
    out["sample_100_10"] = r.sample(range(100), 10)
    r = fresh()
    out["sample_1e6_20"] = r.sample(range(10**6), 20)

    r = fresh()  # after a sample, the stream must continue at the right place
    out["sample_then_random"] = [r.sample(range(100), 10), r.random()]
    return out


def sample_threshold(k):
    """CPython's pool/set switch point (used only to pick test points)."""
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    return setsize


def sample_sweep():
    """random.sample around the pool/set switch, all on one seed-42 stream."""
    r = random.Random(42)
    cases = []
    for k in list(range(0, 31)) + [40, 63, 64, 100, 300]:
        t = sample_threshold(k)
        for n in sorted({k, k + 1, t - 1, t, t + 1, 2 * t}):
            if n >= k:
                cases.append([n, k, r.sample(range(n), k)])
    cases.append([-1, -1, [r.random()]])  # marker: next random() after the sweep
    return cases


def interleaved():
    """One long SILO-BENCH style stream: seed 42, never reseeded.

    The order of operations comes from a separate planning generator; the
    checked quantity is the stream of the seed-42 generator.
    """
    plan = random.Random(20250101)
    random.seed(42)  # the module-level global stream, as the paper's code uses
    ops = []
    draws = 0
    while draws < 10000:
        kind = plan.randrange(0, 14)
        if kind == 0:
            ops.append(["random", random.random()])
            draws += 1
        elif kind == 1:
            k = plan.randint(1, 64)
            ops.append(["getrandbits", k, random.getrandbits(k)])
            draws += 1
        elif kind == 2:
            a, b = plan.choice([(1, 100), (-1000, 1000), (0, 10**9), (1, 5), (0, 1)])
            ops.append(["randint", a, b, random.randint(a, b)])
            draws += 1
        elif kind == 3:
            a, b = plan.choice([(0, 2**40), (-(2**62), 2**62), (0, 2**63 - 1), (INT64_MIN, INT64_MAX)])
            ops.append(["randint", a, b, random.randint(a, b)])
            draws += 1
        elif kind == 4:
            a, b = plan.choice([(0, 10), (10, 1000), (-50, 50), (0, 10**6)])
            ops.append(["randrange", a, b, random.randrange(a, b)])
            draws += 1
        elif kind == 5:
            a, b = plan.choice([(0, 2**33 + 1), (INT64_MIN, INT64_MAX), (-5, 2**53)])
            ops.append(["randrange", a, b, random.randrange(a, b)])
            draws += 1
        elif kind in (6, 7):
            n = plan.choice([1, 2, 3, 5, 8, 26, 100, 1000, 2**31 + 7])
            ops.append(["choice", n, random.choice(range(n))])
            draws += 1
        elif kind == 8:
            n = plan.randint(0, 60)
            x = list(range(n))
            random.shuffle(x)
            ops.append(["shuffle", n, x])
            draws += max(n - 1, 0)
        elif kind in (9, 10):
            a, b = plan.choice([(0, 100), (-50.5, 50.5), (1.0, 2.0), (10, 0), (0.1, 0.7)])
            ops.append(["uniform", a, b, random.uniform(a, b)])
            draws += 1
        elif kind == 11:
            n, k = plan.choice([(100, 5), (20, 20), (50, 10), (10**6, 12), (30, 3), (5, 0)])
            ops.append(["sample", n, k, random.sample(range(n), k)])
            draws += k
        else:
            ops.append(["random", random.random()])
            draws += 1
    return {"seed": 42, "draws": draws, "ops": ops}


def dump(obj):
    return json.dumps(obj, separators=(",", ":"))


def main():
    meta = {
        "generator": "testdata/gen_golden.py",
        "implementation": platform.python_implementation(),
        "python": sys.version.split()[0],
    }
    seeds = [per_seed(s) for s in SEEDS]
    sweep = sample_sweep()
    inter = interleaved()

    w = sys.stdout.write
    w("{\n")
    w('"meta":' + dump(meta) + ",\n")
    w('"seeds":[\n' + ",\n".join(dump(s) for s in seeds) + "\n],\n")
    w('"sample_sweep":[\n' + ",\n".join(dump(c) for c in sweep) + "\n],\n")
    w('"interleaved":{"seed":%d,"draws":%d,"ops":[\n' % (inter["seed"], inter["draws"]))
    w(",\n".join(dump(op) for op in inter["ops"]) + "\n]}\n")
    w("}\n")


if __name__ == "__main__":
    main()
