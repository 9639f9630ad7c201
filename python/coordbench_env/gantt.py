"""A text Gantt chart of an episode's machines, from its trace.jsonl
(docs/trace-format.md, "Machine states"): one row per machine, one
character per time bucket, the state the machine spent most of the bucket
in:

    .  idle     s  setup     #  busy     b  blocked (holding a finished job)     X  down

ParallelEnv.render() draws it once the episode has ended (the server
serves trace.jsonl only then).
"""

import json

SYMBOL = {"idle": ".", "setup": "s", "busy": "#", "blocked": "b", "down": "X"}
MAX_WIDTH = 400


def machine_spans(lines):
    """(end time, {(cell, machine): [(t0, t1, state), ...]}) from the
    trace's lines (str or dict), states per docs/trace-format.md."""
    state, since, before, spans = {}, {}, {}, {}
    end = 0.0

    def move(key, t, new):
        old = state.get(key, "idle")
        if key in since and t > since[key]:
            spans.setdefault(key, []).append((since[key], t, old))
        spans.setdefault(key, [])
        state[key], since[key] = new, t

    for line in lines:
        rec = json.loads(line) if isinstance(line, str) else line
        if not isinstance(rec, dict):
            continue
        t = rec.get("t")
        if not isinstance(t, (int, float)):
            continue
        end = max(end, float(t))
        ev = rec.get("ev")
        if ev == "transport_start" and rec.get("from_machine") is not None:
            key = (str(rec.get("from")), int(rec["from_machine"]))
            if state.get(key) != "down":
                move(key, t, "idle")
            continue
        if "machine" not in rec or "cell" not in rec:
            continue
        key = (str(rec["cell"]), int(rec["machine"]))
        if key not in since:
            since[key] = 0.0
        to = {"setup_start": "setup", "process_start": "busy", "finish": "blocked", "job_complete": "idle"}.get(ev)
        if ev == "process_resume":
            to = "setup" if rec.get("phase") == "setup" else "busy"
        if ev == "breakdown":
            before[key] = state.get(key, "idle")
            to = "down"
        elif ev == "repair":
            to = before.pop(key, "idle")
            if to in ("setup", "busy"):
                to = "idle" if rec.get("job") is None else to  # resumes with process_resume
        if to is not None:
            move(key, t, to)
    for key in since:
        if end > since[key]:
            spans.setdefault(key, []).append((since[key], end, state.get(key, "idle")))
    return end, spans


def text_gantt(lines, width=72):
    """The chart as text: a header with the time span, then a row per
    machine (cell order as the trace first names them)."""
    width = max(10, min(int(width), MAX_WIDTH))
    end, spans = machine_spans(lines)
    if not spans or end <= 0:
        return "(no machine activity yet)"
    label = max(len(f"{c}/{m}") for c, m in spans)
    step = end / width
    rows = [f"{'':{label}} t=0 … {end:g} ({step:g} per column)   "
            + "  ".join(f"{v} {k}" for k, v in SYMBOL.items())]
    for key in sorted(spans, key=lambda k: (k[0], k[1])):
        cells = []
        for i in range(width):
            a, b = i * step, (i + 1) * step
            share = {}
            for t0, t1, st in spans[key]:
                o = min(b, t1) - max(a, t0)
                if o > 0:
                    share[st] = share.get(st, 0.0) + o
            cells.append(SYMBOL[max(share, key=share.get)] if share else " ")
        rows.append(f"{key[0] + '/' + str(key[1]):{label}} |{''.join(cells)}|")
    return "\n".join(rows)
