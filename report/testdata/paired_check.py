#!/usr/bin/env python3
"""Independent check of report.Paired, standard library only.

Reads JSON from stdin: {"level": 0.95, "resamples": B, "seed1": s1,
"seed2": s2, "diffs": [[d...], ...]} and writes, for each list of
differences, {"n", "mean", "sd", "tq", "t_lo", "t_hi", "boot_lo",
"boot_hi"} as a JSON list.

Nothing here comes from the Go code or from gonum:
- The Student t quantile: Python has none, so it is found by inverting
  the t CDF numerically. CDF(t) = 1/2 + integral from 0 to t of the t
  density (written with math.lgamma), integrated by composite Simpson's
  rule on 20000 intervals, and CDF(t) = p solved by Newton's method from
  t = 0 (the CDF is concave on t > 0, so the iterates rise monotonically
  to the root).
- The bootstrap replays Go's math/rand/v2 PCG (128-bit LCG with the DXSM
  output function) from its published constants, draws indexes by
  Lemire's multiply-and-reject method, and takes the empirical quantile
  (the smallest resample mean whose cumulative count reaches p * B).
"""
import json
import math
import sys

M64 = (1 << 64) - 1
M128 = (1 << 128) - 1
MUL = (2549297995355413924 << 64) | 4865540595714422341
INC = (6364136223846793005 << 64) | 1442695040888963407
CHEAP = 0xDA942042E4DD58B5


class PCG:
    def __init__(self, hi, lo):
        self.state = (hi << 64) | lo

    def uint64(self):
        self.state = (self.state * MUL + INC) & M128
        hi, lo = self.state >> 64, self.state & M64
        hi ^= hi >> 32
        hi = (hi * CHEAP) & M64
        hi ^= hi >> 48
        hi = (hi * (lo | 1)) & M64
        return hi


def index(rng, n):
    prod = rng.uint64() * n
    hi, lo = prod >> 64, prod & M64
    if lo < n:
        thresh = ((1 << 64) - n) % n
        while lo < thresh:
            prod = rng.uint64() * n
            hi, lo = prod >> 64, prod & M64
    return hi


def t_pdf(x, nu):
    c = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)
    return math.exp(c - (nu + 1) / 2 * math.log1p(x * x / nu))


def t_cdf(t, nu, steps=20000):
    h = t / steps
    s = t_pdf(0, nu) + t_pdf(t, nu)
    for i in range(1, steps):
        s += (4 if i % 2 else 2) * t_pdf(i * h, nu)
    return 0.5 + s * h / 3


def t_quantile(p, nu):
    t = 0.0
    for _ in range(200):
        step = (t_cdf(t, nu) - p) / t_pdf(t, nu)
        t -= step
        if abs(step) < 1e-13 * max(1.0, t):
            break
    return t


def check(d, level, resamples, seed1, seed2, tq_cache):
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    p = 1 - (1 - level) / 2
    if n - 1 not in tq_cache:
        tq_cache[n - 1] = t_quantile(p, n - 1)
    tq = tq_cache[n - 1]
    half = tq * sd / math.sqrt(n)
    rng = PCG(seed1, seed2)
    means = []
    for _ in range(resamples):
        s = 0.0
        for _ in range(n):
            s += d[index(rng, n)]
        means.append(s / n)
    means.sort()

    def quantile(q):
        fidx = q * resamples
        cum = 0.0
        for v in means:
            cum += 1
            if cum >= fidx:
                return v
        raise AssertionError("impossible")

    a = (1 - level) / 2
    return {"n": n, "mean": mean, "sd": sd, "tq": tq, "t_lo": mean - half, "t_hi": mean + half,
            "boot_lo": quantile(a), "boot_hi": quantile(1 - a)}


def main():
    req = json.load(sys.stdin)
    cache = {}
    out = [check(d, req["level"], req["resamples"], req["seed1"], req["seed2"], cache) for d in req["diffs"]]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
