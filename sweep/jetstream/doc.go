// Package jetstream runs an experiment's cases on many machines over NATS
// JetStream: the JetStream adapter of package sweep (docs/experiments.md,
// "Distributed sweeps"), named, like the packages of Ben Johnson's
// standard layout, after the outside thing it adapts. Inside it,
// `jetstream.` is the NATS client package it adapts
// (github.com/nats-io/nats.go/jetstream); a file that imports both
// renames one of them.
//
// The coordinator (Serve, behind `coordbench sweep serve`) publishes the
// experiment file to a key-value bucket, one message per unfinished case
// on a work-queue stream (Nats-Msg-Id: the case id, so a republish is
// deduplicated), and collects results; workers (Worker, behind
// `coordbench worker`) share one durable pull consumer of that stream:
//
//	serve                        NATS JetStream                     workers
//	  ── experiment ──────────▶  KV coordbench_sweeps
//	  ── case messages ───────▶  stream CB_CASES_<id> ─ consumer ─▶ pull, run
//	                                                    "workers"    InProgress every AckWait/3
//	  ◀─ downloads (object) ──── object store cb_cases_<id> ◀──────── store (or shared dir)
//	                             KV cb_claims_<id> ◀───────────────── claim the case (object)
//	  ◀─ results ─────────────── stream CB_RESULTS_<id> ◀──────────── publish, then ack
//	  ◀─ dead letters ────────── stream CB_DEAD_<id> (max-deliveries advisories)
//	  ◀▶ permits ─────────────── request/reply cb.permit.<id>.* ◀──▶ before every model call
//
// Guarantees: a worker acks a case only after its artifacts are stored
// (in the shared directory, or as one object), so a worker killed
// mid-case loses nothing: after AckWait the case is redelivered. A case
// is counted once however often it was delivered: its id names its
// directory and its claim, a worker skips a case already stored, and
// the coordinator counts results by case id. Of two deliveries that
// both finish, exactly one run is kept (its directory renamed into
// place first, or its object claimed first with a create-only key) and
// the other is reported as a duplicate run, with its usage. MaxDeliver stops a case that
// kills every worker: the server's max-deliveries advisory lands in a
// dead-letter stream, and the coordinator records the case in
// dead_letter.jsonl.
//
// Limits across workers: the coordinator holds one concurrency semaphore
// and one rate limiter per endpoint and hands out permits over NATS
// request/reply (PermitServer); workers ask before each model attempt
// (PermitClient, an llm.Limiter). Permits are leases, renewed by the
// holder, so a killed worker's permits come back. Both sides name a
// model entry's limit by PermitKey: the coordinator's ExperimentLimits,
// the workers' EntryLimiter.
//
// Credentials: an embedded server on any address but the default
// loopback one (LoopbackListen) requires them (ServerConfig.Auth): the
// coordinator's user may do anything, the workers' user, whose password
// is the token serve prints or is given (TokenEnv), only what a worker
// does (workerPermissions): no control messages, no writes to the
// experiment or to the streams' configuration, no reads of the results
// or of the coordinator's replies. Workers share that user; permit
// leases are random ids, so one worker cannot release another's.
//
// Stored cases are checked, not taken on trust: a case counts as stored
// (a worker's "already stored", serve's "done") only if the suite's own
// check passes on it (ServeOptions.CaseFinished, WorkerOptions.Finished:
// sweep.Suite.CaseFinished, manifest and hashes); a stale one is set
// aside and run again.
//
// Trust: anyone who can publish on the NATS server (without
// credentials, any client) can serve an experiment, so a worker runs a
// served one only within its Trust: model endpoints it was allowed (and
// loopback ones), and files below its experiment directory.
package jetstream
