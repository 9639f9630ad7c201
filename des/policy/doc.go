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
//     takes the fastest option its view shows, ignoring queues and power.
//     The plant routing every cell (centralized) takes the least
//     processing time whatever the cell's load: the naive router the
//     A5C12-2 profile is built to punish. In hierarchical and holonic it
//     allocates to the area whose summary shows the fastest capable cell
//     (min_proc_time + transport_time), and the area, which manages its
//     cells' buffers, takes its fastest free cell, escalating when all are
//     full. In the contract net cells bid high when an idle machine is set
//     up for the item's family (which no decider sees); every cell that
//     may refuse accepts unless it would block or cannot start the item;
//   - random: a uniformly random legal action for every agent, seeded;
//     a floor for comparisons;
//   - greedy_py: the Go twin of the example external runner
//     examples/python/greedy_runner.py (docs/external.md): earliest due
//     date, then the fastest area or cell (processing + transport) with a
//     free slot, bid high when there is room, accept everything. A test
//     holds the Python runner to the same decisions and byte-identical
//     traces.
package policy
