#!/usr/bin/env python3
"""Classic hold model in SimPy 2 (Debian's python3-simpy), for comparison
with coordbench's Go kernel (`coordbench des bench --hold N --events M`,
`go test -bench Hold ./sim/`).

N processes each loop on `yield hold, self, Exp(1)`: N events stay pending,
every event pops the earliest and schedules one new event at now + Exp(1).
Prints one JSON line: {"events": .., "seconds": .., "events_per_s": ..}.
Standard library and SimPy only.
"""

import argparse
import json
import random
import sys
import time

try:
    from SimPy.Simulation import Process, Simulation, hold
except ImportError:  # pragma: no cover
    sys.exit("SimPy 2 not found: apt-get install python3-simpy, and run with /usr/bin/python3")


class Holder(Process):
    """One of the N pending events: holds for Exp(1), forever."""

    def __init__(self, sim, counter, rng):
        Process.__init__(self, sim=sim)
        self.counter = counter
        self.rng = rng

    def run(self):
        expo = self.rng.expovariate
        counter = self.counter
        sim = self.sim
        while True:
            yield hold, self, expo(1.0)
            counter[0] += 1
            if counter[0] >= counter[1]:
                sim.stopSimulation()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hold", type=int, default=1000, help="pending events N")
    ap.add_argument("--events", type=int, default=1000000, help="events to process M")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    sim = Simulation()
    sim.initialize()
    counter = [0, args.events]
    for _ in range(args.hold):
        p = Holder(sim, counter, rng)
        sim.activate(p, p.run(), delay=rng.expovariate(1.0))

    start = time.perf_counter()
    sim.simulate(until=float("inf"))
    seconds = time.perf_counter() - start

    events = counter[0]
    print(json.dumps({
        "model": "hold",
        "pending": args.hold,
        "events": events,
        "seconds": round(seconds, 6),
        "events_per_s": round(events / seconds) if seconds > 0 else None,
        "final_time": sim.now(),
        "simpy": __import__("SimPy").__version__,
        "python": sys.version.split()[0],
    }))


if __name__ == "__main__":
    main()
