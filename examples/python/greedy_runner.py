#!/usr/bin/env python3
"""A greedy coordbench controller in plain Python (standard library only).

Run it as an external controller:

    coordbench des run --instance A3C9-1 --paradigm holonic_hybrid \
        --controller-command "python3 examples/python/greedy_runner.py"

    coordbench des check-controller \
        --controller-command "python3 examples/python/greedy_runner.py"

coordbench starts this program once per episode and talks to it in
newline-delimited JSON (docs/external.md, protocol coordbench-external/v1):

    stdin   {"type": "hello", "protocol": ..., "episode": {...}}
    stdout  {"type": "ready"}
    stdin   {"type": "decision", "payload": {...}}   one per decision step
    stdout  {"step": N, "actions": {agent_id: option_index, ...}}
    stdin   {"type": "episode_end", "metrics": {...}}

Only JSON objects go to stdout, one per line. Print anything else to
stderr: coordbench saves it with the run (controller_stderr.txt). A stdout
line that does not start with "{" is skipped (and reported as a warning).

The policy is deliberately simple and readable; every field it reads is
documented in docs/payload.md. des/policy/greedy_py.go is its Go twin: both make
the same choice from the same payload, and a test checks that they produce
byte-identical traces. Change both or neither.
"""

import json
import sys

PROTOCOL = "coordbench-external/v1"


def log(*args):
    """Debug output goes to stderr, never to stdout."""
    print("greedy_runner:", *args, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# The policy: one function per decision kind (payload.md, "Decision kinds").
# Each gets one agent's view and returns the index of an option.
#
# view["legal_actions"]  the indices that may be returned, ascending
# view["options"][i]     what option i does: {"index", "action", and one of
#                        "job" / "area" / "cell" / "bid"} (payload.md,
#                        "Options, legal actions, mask")
# ---------------------------------------------------------------------------


def legal_options(view):
    """The legal options, in ascending index order (ties go to the first)."""
    return [view["options"][i] for i in view["legal_actions"]]


def first_legal(view, match=lambda option: True):
    """The first legal option that matches, else the first legal option."""
    for option in legal_options(view):
        if match(option):
            return option["index"]
    return view["legal_actions"][0]


def lowest(view, key):
    """The legal option with the smallest key; key returns None to skip an
    option. Keys are compared as tuples, strictly, so a tie goes to the
    lowest index."""
    best, best_key = None, None
    for option in legal_options(view):
        k = key(option)
        if k is not None and (best is None or k < best_key):
            best, best_key = option["index"], k
    return best if best is not None else first_legal(view)


def release(view):
    """release (plant): options are "release" with a "job" summary, then
    possibly "defer". Release the job with the earliest due date
    (option.job.due); never defer."""
    def key(option):
        if option["action"] != "release":
            return None
        return (option["job"]["due"],)
    return lowest(view, key)


def select_area(view):
    """select_area (plant): "allocate" options with an "area" summary.
    Prefer an area with a free inbound slot (area.free_slots > 0), then the
    least area.min_proc_time + area.transport_time (the fastest capable
    cell of the area, and the shortest move to the area)."""
    def key(option):
        if option["action"] != "allocate":
            return None
        area = option["area"]
        return (area["free_slots"] <= 0, area["min_proc_time"] + area["transport_time"])
    return lowest(view, key)


def select_cell(view):
    """select_cell, award, reroute and plant_fallback (plant or area): "assign"
    options with a "cell" summary, and "escalate" (area) or "decline"
    (plant_fallback) last. Prefer a cell with a
    free inbound slot (cell.free_slots > 0; 0 means the job would block),
    then the least cell.proc_time + cell.transport_time. Escalate only when
    no cell is offered."""
    def key(option):
        if option["action"] != "assign":
            return None
        cell = option["cell"]
        return (cell["free_slots"] <= 0, cell["proc_time"] + cell["transport_time"])
    return lowest(view, key)


def bid(view):
    """bid (cell): options are bid high, bid medium, bid low, decline. Bid
    high when the cell has a free inbound slot
    (observation.cell.free_slots > 0), otherwise decline."""
    cell = view["observation"].get("cell") or {}
    if cell.get("free_slots", 0) > 0:
        return first_legal(view, lambda o: o["action"] == "bid" and o.get("bid") == "high")
    return first_legal(view, lambda o: o["action"] == "decline")


def commit(view):
    """commit (cell): accept or reject a contract. Always accept."""
    return first_legal(view, lambda o: o["action"] == "accept")


POLICY = {
    "release": release,
    "select_area": select_area,
    "select_cell": select_cell,
    "award": select_cell,
    "reroute": select_cell,
    "plant_fallback": select_cell,
    "bid": bid,
    "commit": commit,
}


def choose(view):
    """One agent's answer: view["kind"] says which decision it is."""
    decide = POLICY.get(view["kind"], first_legal)
    return decide(view)


# ---------------------------------------------------------------------------
# The protocol loop (docs/external.md).
# ---------------------------------------------------------------------------


def send(message):
    """One JSON object per line on stdout, flushed at once."""
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    episode = {}
    while True:
        line = sys.stdin.readline()
        if not line:  # coordbench closed stdin: the episode is over
            return 0
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            if message.get("protocol") != PROTOCOL:
                log("unexpected protocol", message.get("protocol"))
                return 2
            episode = message["episode"]
            log("episode {} / {} / seed {}: {} agents".format(
                episode["instance"], episode["paradigm"]["mode_id"], episode["seed"], len(episode["agents"])))
            send({"type": "ready", "protocol": PROTOCOL, "name": "greedy_runner.py"})
        elif kind == "decision":
            payload = message["payload"]  # exactly the Decision of payload.md
            actions = {agent_id: choose(view) for agent_id, view in payload["active_agents"].items()}
            send({"step": payload["step"], "actions": actions})
        elif kind == "episode_end":
            metrics = message.get("metrics") or {}
            log("episode over: status {}, {} decision steps, {} fallbacks".format(
                metrics.get("status"), metrics.get("G_ds"), metrics.get("G_fb")))
            return 0
        # Any other message type is newer than this runner: ignore it.


if __name__ == "__main__":
    sys.exit(main())
