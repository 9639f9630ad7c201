#!/usr/bin/env python3
"""A runner that crashes: the first legal option for every agent for N
decisions (its argument), then exit status 1 instead of the next answer.

Standard library only. Tests use it to check that a run whose runner died
is marked so in every artifact (status aborted) and fails the command.
"""
import json
import sys

n = int(sys.argv[1])
answered = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print('{"type":"ready","name":"crash_after.py"}', flush=True)
    elif msg["type"] == "decision":
        if answered == n:
            sys.stderr.write("crash_after: crashing after %d decisions\n" % n)
            sys.exit(1)
        p = msg["payload"]
        acts = {a: v["legal_actions"][0] for a, v in p["active_agents"].items()}
        print(json.dumps({"step": p["step"], "actions": acts}), flush=True)
        answered += 1
    elif msg["type"] == "episode_end":
        break
