"""The flat numeric observation: a fixed-length vector per agent, built
from the agent's view (docs/payload.md). The feature list is in
docs/python-env.md ("Observations"); its length depends only on the
agent's role and the plant's layout (and, for the mode selector, the number
of modes offered), never on the decision.

Every value is a raw figure from the payload (time units, kW, counts), not
normalized; an inactive agent's vector is all zeros.
"""

KINDS = ("release", "select_area", "select_cell", "award", "reroute", "plant_fallback", "bid", "commit", "select_mode")
ACTIONS = ("release", "defer", "allocate", "assign", "bid", "decline", "accept", "reject", "escalate", "mode")
BID_LEVEL = {"high": 3.0, "medium": 2.0, "low": 1.0}

COMMON = len(KINDS) + 4  # kind one-hot, active, time, power_headroom_kw, legal count
WORK_ITEM = 6  # present, op, ops, base_time, slack, due - time
PLANT = 8  # power_kw, power_cap_kw, wip, wip_cap, backlog, completed, jobs, in_transit
PLANT_AREA = 6  # busy, down, blocked, free_slots, backlog, power_kw
AREA = 1  # power_kw
AREA_CELL = 9  # machines, idle, busy, blocked, down, waiting, free_slots, backlog, power_kw
CELL = 13  # machines, waiting, incoming, buffer, free_slots, blocked_for_admission, backlog,
# power_kw, then machines idle, setup, busy, blocked, down
OPTION = 7  # legal, action code, f1 … f5 (option_features)
MACHINE_STATES = ("idle", "setup", "busy", "blocked", "down")
# The mode selector (agent "mode_selector", role "selector", kind
# select_mode): the 12 features of its context's mode_state
# (docs/paradigms.md, "Features"), then the plant block.
SELECTOR = "mode_selector"
MODE_FEATURES = ("power_headroom", "wip", "wip_load", "backlog", "down_machines", "blocked_jobs", "capable_cells",
                 "capable_cells_down", "capable_free_slots", "slack", "reroute", "recent_rejections")
ROUTINGS = ("centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid")


def role_of(agent):
    return agent.split(":", 1)[0]


def action_count(agent, layout, offer=()):
    """The size of the agent's action space: the most options its role can
    be offered on this plant (payload.md, "Decision kinds"); for the mode
    selector, the number of modes offered (the episode status's "offer")."""
    role = role_of(agent)
    if role == SELECTOR:
        return len(offer)
    if role == "plant":
        cells = sum(len(a["cells"]) for a in layout)
        return max(9, cells + 1, len(layout))  # 8 jobs + defer; every cell + decline
    if role == "area":
        return len(area_cells(agent, layout)) + 1  # its cells + escalate
    return 4  # bid high/medium/low/decline; accept/reject


def area_cells(agent, layout):
    name = agent.split(":", 1)[1]
    for a in layout:
        if a["area"] == name:
            return a["cells"]
    raise KeyError(f"no area {name!r} in the plant layout")


def plant_length(layout):
    return PLANT + PLANT_AREA * len(layout)


def vector_length(agent, layout, offer=()):
    role = role_of(agent)
    n = COMMON + WORK_ITEM + OPTION * action_count(agent, layout, offer)
    if role == SELECTOR:
        return n + len(MODE_FEATURES) + plant_length(layout)
    if role == "plant":
        return n + plant_length(layout)
    if role == "area":
        return n + AREA + AREA_CELL * len(area_cells(agent, layout))
    return n + CELL


def option_features(option, now):
    """Five numbers describing one option; their meaning depends on the
    option's action (docs/python-env.md):

    release   work, due - now, 0, 0, 0
    allocate  min_proc_time, transport_time, free_slots, backlog, down
    assign    proc_time, transport_time, free_slots, backlog, bid level (award: 3/2/1, else 0)
    bid       bid level (high 3, medium 2, low 1), 0, 0, 0, 0
    mode      routing one-hot (centralized, hierarchical, heterarchical_cnp,
              holonic_hybrid), then 1 when cells may reject (accept_reject)
    other     0, 0, 0, 0, 0
    """
    act = option.get("action")
    if act == "release":
        j = option.get("job") or {}
        return [_f(j.get("work")), _f(j.get("due")) - now, 0.0, 0.0, 0.0]
    if act == "allocate":
        a = option.get("area") or {}
        return [_f(a.get("min_proc_time")), _f(a.get("transport_time")), _f(a.get("free_slots")),
                _f(a.get("backlog")), _f(a.get("down"))]
    if act == "assign":
        c = option.get("cell") or {}
        return [_f(c.get("proc_time")), _f(c.get("transport_time")), _f(c.get("free_slots")),
                _f(c.get("backlog")), BID_LEVEL.get(c.get("bid"), 0.0)]
    if act == "bid":
        return [BID_LEVEL.get(option.get("bid"), 0.0), 0.0, 0.0, 0.0, 0.0]
    if act == "mode":
        m = option.get("mode") or {}
        routing = m.get("routing_authority_mode")
        return [1.0 if routing == r else 0.0 for r in ROUTINGS] + \
            [1.0 if m.get("cell_contract_actions") == "accept_reject" else 0.0]
    return [0.0] * 5


def _plant_block(p, layout):
    out = [_f(p.get(k)) for k in ("power_kw", "power_cap_kw", "wip", "wip_cap", "backlog", "completed", "jobs",
                                  "in_transit")]
    by_id = {a.get("area"): a for a in p.get("areas") or ()}
    for a in layout:
        s = by_id.get(a["area"], {})
        out += [_f(s.get(k)) for k in ("busy", "down", "blocked", "free_slots", "backlog", "power_kw")]
    return out


def _f(x):
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else 0.0


def encode(agent, view, now, layout, offer=()):
    """The agent's vector; view None (inactive) gives zeros. offer is the
    episode's "offer" (the mode selector's options)."""
    length = vector_length(agent, layout, offer)
    if view is None:
        return [0.0] * length
    n = action_count(agent, layout, offer)
    out = [1.0 if view.get("kind") == k else 0.0 for k in KINDS]
    legal = set(view.get("legal_actions") or ())
    obs = view.get("observation") or {}
    out += [1.0, _f(now), _f(obs.get("power_headroom_kw")), float(len(legal))]
    wi = (view.get("context") or {}).get("work_item")
    if wi:
        out += [1.0, _f(wi.get("op")), _f(wi.get("ops")), _f(wi.get("base_time")), _f(wi.get("slack")),
                _f(wi.get("due")) - now]
    else:
        out += [0.0] * WORK_ITEM
    role = role_of(agent)
    if role == SELECTOR:
        ms = (view.get("context") or {}).get("mode_state") or {}
        out += [_f(ms.get(k)) for k in MODE_FEATURES]
        out += _plant_block(obs.get("plant") or {}, layout)
    elif role == "plant":
        out += _plant_block(obs.get("plant") or {}, layout)
    elif role == "area":
        a = obs.get("area") or {}
        out.append(_f(a.get("power_kw")))
        by_id = {c.get("cell"): c for c in a.get("cells") or ()}
        for cid in area_cells(agent, layout):
            s = by_id.get(cid, {})
            out += [_f(s.get(k)) for k in ("machines", "idle", "busy", "blocked", "down", "waiting",
                                           "free_slots", "backlog", "power_kw")]
    else:
        c = obs.get("cell") or {}
        ms = c.get("machines") or []
        counts = c.get("machine_states")  # a summary view: the counts in place of the list
        if not isinstance(counts, dict):
            counts = {s: sum(1 for m in ms if m.get("state") == s) for s in MACHINE_STATES}
        machines = float(len(ms)) if ms else float(sum(_f(v) for v in counts.values()))
        out += [machines] + [_f(c.get(k)) for k in ("waiting", "incoming", "buffer", "free_slots",
                                             "blocked_for_admission", "backlog", "power_kw")]
        out += [_f(counts.get(s)) for s in MACHINE_STATES]
    options = view.get("options") or []
    for i in range(n):
        if i < len(options):
            o = options[i]
            code = float(ACTIONS.index(o["action"]) + 1) if o.get("action") in ACTIONS else 0.0
            out += [1.0 if i in legal else 0.0, code] + option_features(o, now)
        else:
            out += [0.0] * OPTION
    return out
