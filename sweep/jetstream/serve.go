package jetstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/sweep"
)

// ServeOptions are what the coordinator serves.
type ServeOptions struct {
	// Spec is the experiment as workers get it.
	Spec *Spec
	// IDs are every case of the experiment, in suite order; Finished
	// those finished in Dir already (published no more).
	IDs      []string
	Finished []string
	// Dir is the experiment directory: the shared directory workers write
	// into (StoreFS), or where serve downloads cases (StoreObject).
	Dir string
	// Log, if set, gets a line per case outcome.
	Log io.Writer
	// ModelCases are the cases that call a model: the discarded runs
	// workers report of them go to Dir's ledger (sweep.FileAttempts).
	ModelCases map[string]bool
	// CaseFinished, if set, reports whether Dir holds case id finished, as
	// the summaries count it (sweep.Suite.CaseFinished: its manifest and
	// the hashes it records). A case a worker reports done, or finds
	// stored, that is not (a directory of an earlier version, a torn
	// one, a forged object) is set aside and run again, at most
	// Spec.MaxDeliver times a serve, then failed: never counted done
	// while missing from the summaries. Nil: a case directory in Dir is a
	// finished case.
	CaseFinished func(id string) bool
}

// Outcome is what became of the cases of a served experiment.
type Outcome struct {
	Total int
	// Kept are the cases finished before this serve; Done every finished
	// case (Kept included).
	Kept, Done int
	// Failed maps failed cases to their errors; Dead are the
	// dead-lettered cases.
	Failed map[string]string
	Dead   []DeadCase
	// Granted is how many model-call permits were handed out.
	Granted uint64
	// LedgerErr is set if a discarded run a worker reported could not be
	// written to the ledger (its money is missing from the cost files):
	// the first such error, with how many there were.
	LedgerErr error
}

// Serve publishes the experiment and its unfinished cases on nc's
// JetStream and collects results until every case is done, failed or
// dead-lettered, then tells workers to stop. When ctx ends first it
// returns ctx's error and leaves the streams as they are, so that
// serving again resumes. The caller then writes the summaries from Dir.
func Serve(ctx context.Context, nc *nats.Conn, opt ServeOptions) (*Outcome, error) {
	if opt.Spec == nil {
		return nil, errors.New("serve: no experiment spec")
	}
	spec := *opt.Spec // the caller's is left as it is
	spec.ObjectClaims = spec.Store == StoreObject
	s := &spec
	opt.Spec = s
	if err := s.check(); err != nil {
		return nil, err
	}
	for _, id := range opt.IDs {
		if err := checkCaseID(id); err != nil {
			return nil, err
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	st, err := setup(ctx, js, s)
	if err != nil {
		return nil, err
	}
	kv, err := sweepsBucket(ctx, js)
	if err != nil {
		return nil, err
	}
	val, err := encodeSpec(s)
	if err != nil {
		return nil, err
	}
	if int64(len(val)) > nc.MaxPayload() {
		return nil, fmt.Errorf("the experiment is %d bytes as published, more than the NATS server's max_payload %d: raise max_payload", len(val), nc.MaxPayload())
	}
	if _, err := kv.Put(ctx, st.n.specKey(), val); err != nil {
		return nil, fmt.Errorf("publishing the experiment: %w", err)
	}
	if _, err := kv.Put(ctx, "current", []byte(s.ID)); err != nil {
		return nil, fmt.Errorf("publishing the experiment: %w", err)
	}
	var permits *PermitServer
	if len(s.Limits) > 0 {
		if permits, err = StartPermits(nc, s.ID, s.Limits); err != nil {
			return nil, err
		}
		defer permits.Close()
	}
	ledger, err := sweep.OpenAttemptLog(opt.Dir)
	if err != nil {
		return nil, err
	}
	if err := sweep.MigrateFailed(s.Benchmark, opt.Dir, opt.ModelCases, ledger); err != nil {
		return nil, err
	}
	c := &coordinator{opt: opt, st: st, js: js,
		store: &store{spec: s, dir: opt.Dir, casesDir: sweep.CasesDir(s.Benchmark), obj: st.obj, claims: st.claims, finished: opt.CaseFinished},
		state: map[string]string{}, running: map[string]string{}, failed: map[string]string{}, workers: map[string]bool{},
		out: &Outcome{Total: len(opt.IDs), Failed: map[string]string{}}, ledger: ledger, attempts: map[string]int{}, reruns: map[string]int{}}
	for _, id := range opt.IDs {
		c.state[id] = ""
	}
	for _, id := range opt.Finished {
		if _, ok := c.state[id]; ok {
			c.state[id] = StatusDone
			c.out.Kept++
		}
	}
	events := make(chan Event, 256)
	evSub, err := nc.Subscribe(st.n.eventSubject(), func(m *nats.Msg) {
		var ev Event
		if decode(m.Data, &ev) == nil {
			ev.Worker = peerText(ev.Worker, maxWorkerName)
			select {
			case events <- ev:
			default: // progress only: drop rather than block
			}
		}
	})
	if err != nil {
		return nil, err
	}
	defer evSub.Unsubscribe()
	if err := c.publish(ctx); err != nil {
		return nil, err
	}
	results, dead, stop := make(chan jetstream.Msg, 64), make(chan jetstream.Msg, 16), make(chan struct{})
	forward := func(ch chan jetstream.Msg) func(jetstream.Msg) {
		return func(m jetstream.Msg) {
			select {
			case ch <- m:
			case <-stop: // unacked: delivered again to the next serve
			}
		}
	}
	rc, err := st.results.Consume(forward(results))
	if err != nil {
		return nil, err
	}
	dc, err := st.dead.Consume(forward(dead))
	if err != nil {
		rc.Stop()
		return nil, err
	}
	defer func() {
		close(stop)
		rc.Stop()
		dc.Stop()
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	c.dirty = true
	for !c.complete() {
		select {
		case <-ctx.Done():
			c.writeStatus(StateInterrupted)
			return nil, ctx.Err()
		case m := <-results:
			c.onResult(ctx, m)
		case m := <-dead:
			c.onDead(ctx, m)
		case ev := <-events:
			if st, ok := c.state[ev.Case]; ok && st == "" {
				c.running[ev.Case] = ev.Worker
				c.addWorker(ev.Worker)
				c.dirty = true
			}
		case <-tick.C:
			if c.dirty {
				c.writeStatus(StateRunning)
			}
		}
	}
	// Results that come after the last outcome: a duplicate delivery that
	// ended late, or, serving an experiment that was finished already, the
	// results of runs that ended after the previous serve had stopped.
	// Their discarded runs go to the ledger.
	c.drain(ctx, results, dead)
	if c.store.obj != nil && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		if n, err := c.store.prune(pctx, opt.IDs); err != nil {
			c.logf("removing the objects of runs not kept: %v (serving again retries)", err)
		} else if n > 0 {
			c.logf("removed %d objects of runs not kept (left by a worker stopped between upload and claim, or one that could not delete its own)", n)
		}
		cancel()
	}
	c.writeStatus(StateDone)
	nc.Publish(st.n.controlSubject(), encode(control{Kind: "done"}))
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second) // ctx may have ended during the drain
	kv.Delete(dctx, "current")
	dcancel()
	nc.Flush()
	for _, id := range opt.IDs {
		if c.state[id] == StatusDone {
			c.out.Done++
		}
	}
	c.out.Failed = c.failed
	if c.ledgerErrs > 1 {
		c.out.LedgerErr = fmt.Errorf("%w (and %d more runs not recorded)", c.ledgerErr, c.ledgerErrs-1)
	} else {
		c.out.LedgerErr = c.ledgerErr
	}
	if permits != nil {
		c.out.Granted = permits.Granted()
	}
	return c.out, nil
}

// drainQuiet and drainMax bound how long serve keeps reading results once
// every case has an outcome: until none came for drainQuiet, at most
// drainMax. A result published later waits in the results stream for the
// next serve of the experiment.
const (
	drainQuiet = 500 * time.Millisecond
	drainMax   = 10 * time.Second
)

// drain handles the results and dead letters that arrive until none came
// for drainQuiet (at most drainMax, or until ctx ends).
func (c *coordinator) drain(ctx context.Context, results, dead <-chan jetstream.Msg) {
	limit := time.NewTimer(drainMax)
	defer limit.Stop()
	quiet := time.NewTimer(drainQuiet)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-limit.C:
			return
		case <-quiet.C:
			return
		case m := <-results:
			c.onResult(ctx, m)
		case m := <-dead:
			c.onDead(ctx, m)
		}
		quiet.Reset(drainQuiet)
	}
}

// coordinator is Serve's state; only Serve's goroutine touches it.
type coordinator struct {
	opt     ServeOptions
	st      *streams
	js      jetstream.JetStream
	store   *store
	state   map[string]string // case id → "", StatusDone, StatusFailed or StatusDead
	running map[string]string // case id → worker, for cases started without an outcome
	failed  map[string]string
	workers map[string]bool
	// workersCut is set once a worker name was left out of workers.
	workersCut bool
	dirty      bool
	out        *Outcome
	deliv      int
	// ledger records the discarded runs; attempts counts them per case
	// in this serve, to bound what a peer can make it write.
	ledger     *sweep.AttemptLog
	attempts   map[string]int
	ledgerErr  error // the first append that failed
	ledgerErrs int
	// reruns counts the cases published again in this serve because
	// what was stored of them was not a finished case.
	reruns map[string]int
}

// addWorker records a worker's name for the status, up to maxWorkers
// names (anyone who can publish on the NATS server can send names).
func (c *coordinator) addWorker(name string) {
	if len(c.workers) < maxWorkers || c.workers[name] {
		c.workers[name] = true
	} else if !c.workersCut {
		c.workersCut = true
		c.logf("more than %d worker names: the status lists the first ones", maxWorkers)
	}
}

func (c *coordinator) logf(format string, a ...any) {
	if c.opt.Log != nil {
		fmt.Fprintf(c.opt.Log, format+"\n", a...)
	}
}

// publish queues every case without an outcome that is not in the
// stream already. In the object store, a case stored by an earlier serve
// is downloaded instead.
func (c *coordinator) publish(ctx context.Context) error {
	queued := map[string]bool{}
	info, err := c.st.cases.Info(ctx)
	if err != nil {
		return err
	}
	if info.State.Msgs > 0 {
		// Acked messages leave gaps: stop once every message left is seen.
		found := uint64(0)
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && found < info.State.Msgs; seq++ {
			m, err := c.st.cases.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			found++
			queued[m.Header.Get(caseHeader)] = true
		}
	}
	n := 0
	for _, id := range c.opt.IDs {
		if c.state[id] != "" {
			continue
		}
		if c.store.obj != nil {
			if has, err := c.store.has(ctx, id); err != nil {
				return err
			} else if has {
				// A claim that names no usable object fails its case
				// (claims cannot be rewritten), not the whole serve; a
				// store that cannot be reached stops the serve.
				if err := c.store.fetch(ctx, c.opt.Dir, id); errors.As(err, new(*badStoredError)) {
					if werr := writeFailed(c.opt.Dir, id, "", err.Error(), c.opt.Spec.MaxCaseBytes); werr != nil {
						c.logf("recording failed case %s: %v", id, werr)
					}
					c.fail(id, err.Error())
					continue
				} else if err != nil {
					return err
				}
				if c.store.stored(c.casesDir(), id) {
					c.state[id] = StatusDone
					c.out.Kept++
					continue
				}
				c.logf("case %s: its stored object is not a finished case (of an earlier version, torn or forged): run again", id)
				if err := c.unstore(ctx, id); err != nil {
					return err
				}
			}
		} else if fileExists(filepath.Join(c.casesDir(), id)) {
			// Finished since serve looked (a worker of an earlier serve), or
			// stale: a worker must not take it for the stored case.
			if c.store.stored(c.casesDir(), id) {
				c.state[id] = StatusDone
				c.out.Kept++
				continue
			}
			c.logf("case %s: its directory is not a finished case (of an earlier version, or torn): run again", id)
			if err := setAside(filepath.Join(c.casesDir(), id)); err != nil {
				return err
			}
		}
		if queued[id] {
			continue
		}
		if err := c.queue(ctx, id); err != nil {
			return err
		}
		n++
	}
	c.logf("published %d cases (%d finished already, %d queued from before)", n, c.out.Kept, len(queued))
	return nil
}

// queue publishes case id on the work queue.
func (c *coordinator) queue(ctx context.Context, id string) error {
	msg := &nats.Msg{Subject: c.st.n.caseSubject(), Data: []byte(id), Header: nats.Header{caseHeader: []string{id}}}
	ack, err := c.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id))
	if err == nil && ack.Duplicate {
		// Published and acked within the duplicate window by an earlier
		// serve (a failed case, or one run again): publish it anew.
		ack, err = c.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id+"#"+nuid.Next()))
	}
	if err != nil {
		return fmt.Errorf("publishing case %s: %w", id, err)
	}
	return nil
}

func (c *coordinator) casesDir() string { return filepath.Join(c.opt.Dir, c.store.casesDir) }

// unstore removes what is stored of case id, which is not a finished
// case, so that it runs again: its directory in Dir and, in the object
// store, its claim (a delete marker, after which a claim can be created
// again) and the object the claim named.
func (c *coordinator) unstore(ctx context.Context, id string) error {
	if err := setAside(filepath.Join(c.casesDir(), id)); err != nil {
		return err
	}
	if c.store.obj == nil {
		return nil
	}
	name, err := c.store.object(ctx, id)
	if err != nil && !errors.As(err, new(*badStoredError)) {
		return err
	}
	if err := c.store.claims.Delete(ctx, claimKey(id)); err != nil {
		return fmt.Errorf("deleting the claim of case %s: %w", id, err)
	}
	if name != "" {
		if err := c.store.obj.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			c.logf("deleting object %s of case %s: %v", name, id, err)
		}
	}
	return nil
}

// rerun publishes again case id, reported done by a worker whose stored
// case is not finished (why), at most MaxDeliver times a serve; then the
// case fails.
func (c *coordinator) rerun(ctx context.Context, id, why string) {
	if c.reruns[id]++; c.reruns[id] > c.opt.Spec.MaxDeliver {
		c.fail(id, fmt.Sprintf("%s, after it was run again %d times", why, c.opt.Spec.MaxDeliver))
		return
	}
	if err := c.unstore(ctx, id); err != nil {
		c.fail(id, fmt.Sprintf("%s; it could not be run again: %v", why, err))
		return
	}
	if err := c.queue(ctx, id); err != nil {
		c.fail(id, fmt.Sprintf("%s; it could not be run again: %v", why, err))
		return
	}
	c.logf("%s: run again (%s)", why, c.progress())
}

func (c *coordinator) complete() bool {
	for _, st := range c.state {
		if st == "" {
			return false
		}
	}
	return true
}

func (c *coordinator) onResult(ctx context.Context, m jetstream.Msg) {
	defer m.Ack()
	var r Result
	if err := decode(m.Data(), &r); err != nil {
		c.logf("ignoring a result: %v", err)
		return
	}
	r.Worker, r.Err = peerText(r.Worker, maxWorkerName), peerText(r.Err, maxErrText)
	prev, ok := c.state[r.Case]
	if !ok || checkCaseID(r.Case) != nil {
		c.logf("ignoring a result for %q: not a case of this experiment", r.Case)
		return
	}
	c.record(ctx, r)
	if r.Status == StatusReturned {
		return // handed back: delivered again
	}
	c.deliv++
	c.dirty = true
	delete(c.running, r.Case)
	if r.Worker != "" {
		c.addWorker(r.Worker)
	}
	if prev == StatusDone {
		return // counted once
	}
	switch r.Status {
	case StatusDone:
		var err error
		if c.store.obj != nil {
			err = c.store.fetch(ctx, c.opt.Dir, r.Case)
		} else if !fileExists(filepath.Join(c.opt.Dir, c.store.casesDir, r.Case)) {
			err = fmt.Errorf("worker %s reported it done, but %s has no such case directory: give workers the same shared directory, or store cases as objects%s",
				r.Worker, c.opt.Dir, opterr.SeeText([]string{"Dir", "Store"}))
		}
		if err != nil {
			c.fail(r.Case, err.Error())
			return
		}
		if !c.store.stored(c.casesDir(), r.Case) {
			c.rerun(ctx, r.Case, fmt.Sprintf("worker %s reported case %s done, but what is stored of it is not a finished case (of an earlier version, torn or forged)", r.Worker, r.Case))
			return
		}
		c.state[r.Case] = StatusDone
		delete(c.failed, r.Case)
		c.logf("done %s (worker %s; %s)", r.Case, r.Worker, c.progress())
	case StatusFailed:
		if prev != "" {
			return
		}
		msg := r.Err
		if c.store.obj != nil {
			if err := writeFailed(c.opt.Dir, r.Case, "", msg, c.opt.Spec.MaxCaseBytes); err != nil {
				c.logf("recording failed case %s: %v", r.Case, err)
			}
		}
		c.fail(r.Case, msg)
	}
}

// record appends the discarded run r reports, if any, to the ledger.
// A case is delivered at most MaxDeliver times a serve, each delivery
// run once: more records of one case are a peer's, and dropped. A run
// handed back naming its object (Result.Object) whose claim was written
// after all is the kept one, not a discarded one.
func (c *coordinator) record(ctx context.Context, r Result) {
	a := r.Attempt
	if a == nil || !c.opt.ModelCases[r.Case] {
		return
	}
	if a.CaseID != r.Case {
		c.logf("ignoring the attempt record of a result for %s: it names case %q", r.Case, peerText(a.CaseID, maxWorkerName))
		return
	}
	if r.Object != "" && c.store.obj != nil && checkObjectName(r.Case, r.Object) == nil {
		if kept, err := c.store.claimed(ctx, r.Case, r.Object); err != nil {
			c.logf("reading the claim of %s: %v (its handed-back run is recorded as discarded)", r.Case, err)
		} else if kept {
			c.logf("the run of %s that worker %s handed back was stored after all: kept, not discarded", r.Case, r.Worker)
			return
		}
	}
	if c.attempts[r.Case] > c.opt.Spec.MaxDeliver {
		return
	}
	c.attempts[r.Case]++
	if err := c.ledger.Append(*a); err != nil {
		c.logf("recording a discarded run of %s (worker %s): %v", r.Case, r.Worker, err)
		if c.ledgerErrs++; c.ledgerErrs == 1 {
			c.ledgerErr = fmt.Errorf("recording a discarded run of %s in %s: %w", r.Case, sweep.FileAttempts, err)
		}
	}
}

func (c *coordinator) fail(id, msg string) {
	c.state[id] = StatusFailed
	c.failed[id] = msg
	c.logf("failed %s: %s (%s)", id, firstLine(msg), c.progress())
}

// progress is how many cases have an outcome, for log lines.
func (c *coordinator) progress() string {
	n := 0
	for _, st := range c.state {
		if st != "" {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(c.state))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// onDead records a dead-lettered case: the server's advisory names the
// case message's stream sequence; the message stays in the work queue
// (never acked) until it is deleted here.
func (c *coordinator) onDead(ctx context.Context, m jetstream.Msg) {
	var a advisory
	if err := decode(m.Data(), &a); err != nil {
		m.Ack()
		c.logf("ignoring a dead-letter advisory: %v", err)
		return
	}
	raw, err := c.st.cases.GetMsg(ctx, a.StreamSeq)
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		// The case's message is still there, unread: keep the advisory
		// and read it again, or its case would be waited for forever.
		m.NakWithDelay(time.Second)
		c.logf("dead-letter advisory for message %d: %v (retrying)", a.StreamSeq, err)
		return
	}
	defer m.Ack()
	if err != nil { // gone: the case was acked after all
		c.logf("dead-letter advisory for message %d: %v", a.StreamSeq, err)
		return
	}
	id := raw.Header.Get(caseHeader)
	st, ok := c.state[id]
	if !ok {
		return
	}
	c.dirty = true
	if st == "" {
		// A worker may have stored it and died before its ack.
		if has, err := c.store.has(ctx, id); err == nil && has {
			if c.store.obj == nil || (c.store.fetch(ctx, c.opt.Dir, id) == nil && c.store.stored(c.casesDir(), id)) {
				c.state[id] = StatusDone
				c.st.cases.DeleteMsg(ctx, a.StreamSeq)
				return
			}
		}
		d := DeadCase{Case: id, Deliveries: a.Deliveries, StreamSeq: a.StreamSeq}
		c.state[id] = StatusDead
		delete(c.running, id)
		c.out.Dead = append(c.out.Dead, d)
		if err := atomicfs.AppendLine(filepath.Join(c.opt.Dir, DeadLetterFile), encode(d)); err != nil {
			c.logf("recording dead-lettered case %s: %v", id, err)
		}
		c.logf("dead-lettered %s after %d deliveries", id, a.Deliveries)
	}
	c.st.cases.DeleteMsg(ctx, a.StreamSeq)
}

func (c *coordinator) writeStatus(state string) {
	s := &Status{ExperimentID: c.opt.Spec.ID, State: state, Store: c.opt.Spec.Store, Cases: len(c.opt.IDs),
		Deliveries: c.deliv, FailedCases: c.failed}
	for _, id := range c.opt.IDs {
		switch c.state[id] {
		case StatusDone:
			s.Done++
		case StatusFailed:
			s.Failed++
		case StatusDead:
			s.DeadLetter++
			s.DeadCases = append(s.DeadCases, id)
		default:
			if _, ok := c.running[id]; ok {
				s.Running++
			} else {
				s.Pending++
			}
		}
	}
	s.Workers = slices.Sorted(maps.Keys(c.workers))
	if err := writeStatus(c.opt.Dir, s); err != nil {
		c.logf("writing %s: %v", StatusFile, err)
	}
	c.dirty = false
}
