// Package policy holds the built-in controllers of the scheduling
// benchmark. Like any controller they see only the public payload
// (coord.Decision), never the engine, and they answer every role and
// decision kind of every paradigm. Each agent decides from its own
// role-local view (rolelocal.go): a cell from its machines, buffer,
// backlog and its contract's proc_time; an area from its own cells; the
// plant from every cell (centralized), from the area summaries
// (hierarchical, holonic) or from the bids (contract net). So the same
// controller decides differently under each paradigm:
//
//   - rule (the default): earliest due date for release, deferring while
//     the plant is over its power cap; routing (plant, area, award,
//     reroute, plant fallback) to the feasible cell or area with the least
//     expected completion (transport + queue per machine + processing), as
//     the decider's own view shows it, avoiding full buffers and the power
//     overshoot a cell would add when headroom is short; an area escalates
//     when all its cells are full; a cell bids by its own load (high when
//     a machine is idle, declining when full in the first round) and,
//     where it may, rejects work that would block, that none of its
//     machines can start (all blocked or down), or that would wait more
//     than four processing times behind its queue (at most twice per item,
//     so rejections cannot ping-pong forever);
//   - greedy: release by earliest due date, never deferring; every role
//     takes the fastest option (processing + transport) its view shows,
//     avoiding only what it can see would block, ignoring queues and
//     power: the plant the fastest cell that can start at once
//     (centralized) or the area whose summary shows the fastest capable
//     cell; the area its fastest free cell, escalating when all are full;
//     cells bid high when an idle machine is set up for the item's family
//     and accept unless they would block or cannot start it;
//   - random: a uniformly random legal action for every agent, seeded;
//     a floor for comparisons;
//   - greedy_py: the Go twin of the example external runner
//     examples/python/greedy_runner.py (docs/external.md): earliest due
//     date, then the fastest area or cell (processing + transport) with a
//     free slot, bid high when there is room, accept everything. A test
//     holds the Python runner to the same decisions and byte-identical
//     traces.
package policy
