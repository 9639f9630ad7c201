// Package policy holds the built-in controllers of the scheduling
// benchmark. Like any controller they see only the public payload
// (coord.Decision), never the engine, and they answer every role and
// decision kind of every paradigm:
//
//   - rule (the default): earliest due date for release, deferring while
//     the plant is over its power cap; routing (plant, area, award,
//     reroute) to the feasible cell or area with the least expected
//     completion (transport + queue per machine + processing), avoiding
//     full buffers and the power overshoot a cell would add when headroom
//     is short; an area escalates when all its cells are full; a cell bids
//     by its own load (high when a machine is idle, declining when full in
//     the first round) and, where it may, rejects work that would block or
//     wait more than four processing times behind its queue (at most twice
//     per item, so rejections cannot ping-pong forever);
//   - greedy: release by earliest due date, route to the fastest cell or
//     area (least processing time), bid high and accept everything,
//     ignoring load and power: the naive router the A5C12-2 profile is
//     built to punish;
//   - random: a uniformly random legal action for every agent, seeded;
//     a floor for comparisons;
//   - greedy_py: the Go twin of the example external runner
//     examples/python/greedy_runner.py (docs/external.md): earliest due
//     date, then the fastest area or cell (processing + transport) with a
//     free slot, bid high when there is room, accept everything. A test
//     holds the Python runner to the same decisions and byte-identical
//     traces.
package policy
