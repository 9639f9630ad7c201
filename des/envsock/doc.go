// Package envsock serves vectorized DESBench learning environments over a
// unix socket with a binary, batched protocol: one request steps n episodes
// and one reply carries their observation vectors, action masks, rewards
// and ends as flat little-endian arrays, so that a Python learner reads
// them without parsing JSON. It is the fast local transport of
// python/coordbench_env (vector_env(n, socket=PATH)); des/envserver's
// HTTP/JSON API stays the transport for remote use. The observations,
// masks, rewards, seeds and metrics are those of the HTTP transport
// (package envcore computes what both share); docs/python-env.md
// ("The socket transport") compares the two.
//
// # The protocol
//
// A connection is one vector session. Every request is a frame: a
// little-endian uint32 length L (at most Config.MaxFrame), a one-byte op and
// L−1 bytes of body; every reply a header of 8 bytes (uint32 body length,
// one status byte: 0 ok, 1 error, three zero bytes) and the body (for an
// error, its UTF-8 message; the session stays usable unless the request
// could not be framed). Ops:
//
//   - OpOpen (1), JSON body {"instance", "paradigm", "n", "reward",
//     "payloads", "shared_memory", "play", "others"}: makes n slots, none
//     playing yet. play and others are des serve's (OpenRequest.Play):
//     the reply's per-agent arrays then hold the played agents. reward,
//     if set, holds the weights of python/coordbench_env's Reward; the
//     server then computes each step's reward. The reply (JSON) lists the
//     agents, layout, offer, and per agent its action count and vector
//     length. With "shared_memory" true, where the platform can, the
//     fixed part of every step reply lives in a region shared with the
//     client: the reply's "shared_memory" is its size, and the frame
//     carries the region's descriptor (SCM_RIGHTS) to map; later step
//     replies carry only the tail (a uint32 length and the JSON), the
//     arrays being written in place before the reply is sent and left
//     alone until the next step request. Not granted, "shared_memory_error"
//     says why and the replies are sent whole.
//   - OpStep (2), binary body: seeds (n uint64), actions (n×A int32, A the
//     number of agents, −1 for none), commands (n bytes: 0 leave the slot
//     alone (its entries say idle), 1 act on its pending decision, 2 start
//     a new episode with seeds[i], abandoning the slot's current one, 3
//     skip it: neither advanced nor written, its entries keep what an
//     earlier reply wrote). The reply is the Reply layout below. Requests
//     may be pipelined: a client may send the next before reading a
//     reply (the replies come in order). A pipelined client steps its
//     episodes in groups, each request acting on one group and skipping
//     the rest, and reads only its group's entries: with shared memory
//     the server writes another group's entries meanwhile.
//   - OpClose (3), empty body: ends every slot's episode; the slots stay,
//     idle, for the next resets (and OpOpen may open the session anew).
//   - OpBench (4), JSON body BenchRequest: plays the given episodes in
//     process, with no transport, and reports decisions and nanoseconds
//     (the side-by-side baseline of python/examples/throughput.py).
//   - OpCPU (5), empty body: {"cpu_nanos"}, the CPU time the server
//     process has used (-1 where unknown), for throughput.py's CPU figures.
//
// The reply to OpStep, for n slots, A agents whose vectors total Lv floats
// and whose masks total M entries per slot, in this order: float64
// time[n], reward[n], tardiness[n], obs[n×Lv]; uint64 seed[n]; int32
// step[n], completed[n], released[n]; uint8 state[n] (0 a decision is
// pending, 1 the episode ended at this step, 2 nothing happened),
// terminated[n], truncated[n], active[n×A], mask[n×M]; then a uint32 length
// and a JSON tail (empty when there is nothing to say) holding the ends
// (status, metrics), the problems of the actions taken, the decision
// payloads when asked for, and errors, each tagged with its slot.
//
// # Concurrency and state
//
// Each slot drives its episode as a harness.Stepper on the goroutine that
// steps it: the episode runs to the next decision for the client and
// returns (no goroutine or coroutine per episode, and answers by
// position, without the answer map of a controller's Act).
// A step splits the slots among Config.Workers goroutines (default 1),
// which advance them in parallel; each slot writes only its own entries
// of the reply. A pipelined client's groups are one session: while the
// server steps one group the client works on another, and the server
// finds the next request waiting instead of parking its goroutine.
// The package keeps no global state: a Server owns its sessions, a
// session its slots.
package envsock
