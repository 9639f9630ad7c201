// Package policy holds the built-in controllers of the scheduling
// benchmark. Like any controller they see only the public payload
// (coord.Decision), never the engine:
//
//   - rule (the default): earliest due date for release, deferring while
//     the plant is over its power cap; routing to the feasible cell with
//     the least expected completion (transport + queue per machine +
//     processing), avoiding full buffers and power-hungry cells when the
//     power headroom is short;
//   - greedy: release by earliest due date, route to the fastest cell
//     (least processing time), ignoring load and power: the naive router
//     the A5C12-2 profile is built to punish;
//   - random: a uniformly random legal action for every agent, seeded;
//     a floor for comparisons.
package policy
