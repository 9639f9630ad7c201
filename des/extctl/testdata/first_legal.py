#!/usr/bin/env python3
"""The smallest external runner: the first legal option for every agent.

Used to measure the protocol's round-trip overhead (BenchmarkRoundTripPython).
"""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print('{"type":"ready"}', flush=True)
    elif msg["type"] == "decision":
        p = msg["payload"]
        acts = {a: v["legal_actions"][0] for a, v in p["active_agents"].items()}
        print(json.dumps({"step": p["step"], "actions": acts}), flush=True)
    elif msg["type"] == "episode_end":
        break
