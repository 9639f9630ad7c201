package jetstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/suiterun"
	"github.com/coordbench/coordbench/sweep"
)

// CaseRun is one case for a worker's RunCase to run.
type CaseRun struct {
	Spec *Spec
	ID   string
	// Dir is an empty scratch suite directory of this case alone.
	Dir string
	// Cache is the response cache file the case writes (per case, so
	// that it travels with the case's results).
	Cache string
	// Limiter hands out the experiment's global model-call permits (nil
	// when it has none).
	Limiter llm.Limiter
}

// RunCase runs one case with the code of `sweep run` and returns its
// finished directory; a failed case is an error (its partial artifacts
// in Dir's failed/<id>/). A worker calls it from several goroutines.
type RunCase func(ctx context.Context, c CaseRun) (string, error)

// WorkerOptions configure a worker.
type WorkerOptions struct {
	// Name identifies the worker in results and status.
	Name string
	// Slots is how many cases it runs at once (default 1).
	Slots int
	// Dir is the shared experiment directory (the coordinator's
	// ServeOptions.Dir), required when the experiment stores cases in a
	// shared directory. Worker's errors about it are *opterr.Error values
	// of option "Dir".
	Dir string
	// Scratch is where cases run before they are stored ("": the
	// system's temporary directory).
	Scratch string
	// Run runs one case.
	Run RunCase
	// Log, if set, gets a line per case.
	Log io.Writer
	// Poll bounds each wait for a case, after which the worker checks
	// whether the experiment is over (default 1 s).
	Poll time.Duration
	// WaitSpec bounds the wait for an experiment to be served (0: wait
	// until ctx ends).
	WaitSpec time.Duration
	// Check, if set, is asked about the served experiment before any
	// case is pulled; an error stops the worker with that error, leaving
	// the cases to other workers (a worker whose files differ from
	// serve's, say).
	Check func(*Spec) error
	// Finished, if set, is asked once (after Check) for the check of a
	// case in the shared directory Dir (sweep.Suite.CaseFinished, as
	// serve checks it): a case directory there that it says is not
	// finished (of an earlier version, torn) is run again and replaced,
	// never reported stored. Nil: a case directory there is stored. Not
	// asked when cases are stored as objects (serve checks those).
	Finished func(*Spec) (func(id string) bool, error)
}

// WorkerReport is what a worker did.
type WorkerReport struct {
	ExperimentID string
	// Ran counts cases run to an outcome (failures included), Failed the
	// failures, Kept the deliveries of cases stored already, Returned
	// the cases handed back (NAK) when aborted or when storing failed.
	Ran, Failed, Kept, Returned int
}

// Worker pulls cases of the experiment being served on nc from the
// shared durable consumer and runs them until the experiment is over or
// ctx ends (then it pulls no more, and the cases in flight finish).
// Ending abort as well cuts the cases in flight short (RunCase gets
// abort) and hands them back to the queue (NAK) for another worker, after
// reporting the usage of their runs; a run that finished all the same is
// stored. Every case is stored before it is acked.
func Worker(ctx, abort context.Context, nc *nats.Conn, opt WorkerOptions) (*WorkerReport, error) {
	if opt.Run == nil {
		return nil, errors.New("worker: no case runner")
	}
	opt.Slots = max(opt.Slots, 1)
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	spec, kv, err := waitSpec(ctx, js, opt)
	if err != nil {
		return nil, err
	}
	if opt.Check != nil {
		if err := opt.Check(spec); err != nil {
			return &WorkerReport{ExperimentID: spec.ID}, fmt.Errorf("experiment %s: %w", short(spec.ID), err)
		}
	}
	n, _ := namesOf(spec.ID)
	w := &worker{opt: opt, spec: spec, n: n, nc: nc, js: js, kv: kv, abort: abort,
		rep: &WorkerReport{ExperimentID: spec.ID},
		st:  &store{spec: spec, dir: opt.Dir, casesDir: sweep.CasesDir(spec.Benchmark)}}
	switch spec.Store {
	case StoreFS:
		if opt.Finished != nil {
			if w.st.finished, err = opt.Finished(spec); err != nil {
				return &WorkerReport{ExperimentID: spec.ID}, fmt.Errorf("experiment %s: %w", short(spec.ID), err)
			}
		}
		if opt.Dir == "" {
			return nil, opterr.New("Dir", "experiment %s stores cases in a shared directory: give the directory sweep serve writes (or have serve store cases as objects)", short(spec.ID))
		}
		m, err := sweep.ReadMarker(opt.Dir)
		if err != nil {
			return nil, opterr.New("Dir", "%s: not the shared directory of sweep serve: %w", opt.Dir, err)
		}
		if m.ExperimentID != spec.ID {
			return nil, opterr.New("Dir", "%s holds experiment %s, not the served %s", opt.Dir, short(m.ExperimentID), short(spec.ID))
		}
	case StoreObject:
		if w.st.obj, err = js.ObjectStore(ctx, n.objectBucket()); err != nil {
			return nil, fmt.Errorf("object store %s: %w", n.objectBucket(), err)
		}
		if w.st.claims, err = js.KeyValue(ctx, n.claimBucket()); err != nil {
			return nil, fmt.Errorf("key-value bucket %s (the claims of stored cases): %w", n.claimBucket(), err)
		}
	}
	cons, err := js.Consumer(ctx, n.caseStream(), ConsumerName)
	if err != nil {
		return nil, fmt.Errorf("consumer %s of %s: %w", ConsumerName, n.caseStream(), err)
	}
	if len(spec.Limits) > 0 {
		pc, err := NewPermitClient(nc, spec.ID)
		if err != nil {
			return nil, err
		}
		defer pc.Close()
		w.limiter = pc
	}
	w.recoverScratch(ctx)
	pull, stop := context.WithCancel(ctx)
	defer stop()
	sub, err := nc.Subscribe(n.controlSubject(), func(m *nats.Msg) {
		var c control
		if decode(m.Data, &c) == nil && c.Kind == "done" {
			stop()
		}
	})
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	errs := make(chan error, opt.Slots)
	var wg sync.WaitGroup
	for range opt.Slots {
		wg.Go(func() { errs <- w.slot(pull, cons) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return w.report(), err
		}
	}
	return w.report(), nil
}

// waitSpec waits until an experiment is served and reads it.
func waitSpec(ctx context.Context, js jetstream.JetStream, opt WorkerOptions) (*Spec, jetstream.KeyValue, error) {
	var deadline <-chan time.Time
	if opt.WaitSpec > 0 {
		t := time.NewTimer(opt.WaitSpec)
		defer t.Stop()
		deadline = t.C
	}
	for {
		kv, err := js.KeyValue(ctx, Bucket)
		if err == nil {
			spec, ok, err := currentSpec(ctx, kv)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				return spec, kv, nil
			}
		} else if !errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil, nil, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-deadline:
			return nil, nil, errors.New("no experiment is being served (start coordbench sweep serve)")
		case <-time.After(opt.Poll):
		}
	}
}

type worker struct {
	opt     WorkerOptions
	spec    *Spec
	n       names
	nc      *nats.Conn
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	st      *store
	limiter llm.Limiter
	abort   context.Context

	mu  sync.Mutex
	rep *WorkerReport
}

func (w *worker) report() *WorkerReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := *w.rep
	return &r
}

func (w *worker) count(f func(r *WorkerReport)) {
	w.mu.Lock()
	f(w.rep)
	w.mu.Unlock()
}

func (w *worker) logf(format string, a ...any) {
	if w.opt.Log != nil {
		fmt.Fprintf(w.opt.Log, w.opt.Name+": "+format+"\n", a...)
	}
}

// slot pulls and runs cases one at a time until pull ends or the
// experiment is over.
func (w *worker) slot(pull context.Context, cons jetstream.Consumer) error {
	for pull.Err() == nil {
		msg, err := cons.Next(jetstream.FetchMaxWait(w.opt.Poll))
		if err != nil {
			if w.nc.IsClosed() {
				return errors.New("the connection to NATS is closed (has sweep serve exited?)")
			}
			if !w.served(pull) {
				return nil
			}
			if !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
				select { // the server may be restarting: retry shortly
				case <-pull.Done():
				case <-time.After(w.opt.Poll):
				}
			}
			continue
		}
		w.handle(msg)
	}
	return nil
}

// served reports whether the experiment is still the one being served.
func (w *worker) served(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	cur, err := w.kv.Get(ctx, "current")
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false
	}
	return err != nil || string(cur.Value()) == w.spec.ID // unsure: keep going
}

// handle runs one delivered case and acks it once its outcome is stored
// and reported.
func (w *worker) handle(msg jetstream.Msg) {
	ctx := context.WithoutCancel(w.abort)
	id := msg.Headers().Get(caseHeader)
	if err := checkCaseID(id); err != nil {
		w.logf("dropping a malformed case message: %v", err)
		msg.Term()
		return
	}
	var delivery uint64
	if md, err := msg.Metadata(); err == nil {
		delivery = md.NumDelivered
	}
	w.nc.Publish(w.n.eventSubject(), encode(Event{Kind: "start", Case: id, Worker: w.opt.Name, PID: os.Getpid(), Delivery: delivery}))
	res := Result{Case: id, Worker: w.opt.Name, Status: StatusDone, Delivery: delivery}
	if has, err := w.st.has(ctx, id); err == nil && has {
		res.Kept = true
		w.count(func(r *WorkerReport) { r.Kept++ })
		w.finish(msg, res)
		return
	}
	hb := make(chan struct{})
	var hbWG sync.WaitGroup
	hbWG.Go(func() {
		t := time.NewTicker(max(w.spec.AckWait/3, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-hb:
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	})
	defer func() {
		close(hb)
		hbWG.Wait()
	}()
	scratch, err := os.MkdirTemp(w.opt.Scratch, scratchPrefix)
	if err != nil {
		w.giveBack(msg, id, err, nil)
		return
	}
	defer os.RemoveAll(scratch)
	// Held while the case runs, and marked with the experiment: a worker
	// that restarts after this one was killed recovers the run's usage
	// (recoverScratch), and never reads a live worker's run.
	release, err := atomicfs.HoldDir(scratch)
	if err == nil {
		err = os.WriteFile(filepath.Join(scratch, scratchExperiment), []byte(w.spec.ID), 0o644)
	}
	if err != nil {
		w.giveBack(msg, id, err, nil)
		return
	}
	defer release()
	run := CaseRun{Spec: w.spec, ID: id, Dir: filepath.Join(scratch, "suite"), Cache: filepath.Join(scratch, tarCache), Limiter: w.limiter}
	w.logf("running %s (delivery %d)", id, delivery)
	caseDir, runErr := safeRun(w.abort, w.opt.Run, run)
	// The run's usage, if its result is not kept: the case directory's,
	// or the partial artifacts' of a failed run.
	usedDir := caseDir
	if runErr != nil || caseDir == "" {
		usedDir = filepath.Join(run.Dir, suiterun.FailedDir, id)
	}
	if w.abort.Err() != nil && runErr != nil {
		// Cut short (or failed) while the worker was told to stop: not the
		// case's outcome. A run that finished all the same is stored.
		w.giveBack(msg, id, w.abort.Err(), w.attempt(id, sweep.AttemptReturned, usedDir))
		return
	}
	if runErr == nil {
		stored, err := w.st.put(ctx, id, caseDir, run.Cache, scratch)
		if err != nil {
			w.giveBack(msg, id, fmt.Errorf("storing: %w", err), w.attempt(id, sweep.AttemptReturned, usedDir))
			return
		}
		if !stored {
			res.Attempt = w.attempt(id, sweep.AttemptDuplicate, usedDir)
		}
		if w.st.obj == nil {
			os.RemoveAll(filepath.Join(w.opt.Dir, suiterun.FailedDir, id))
		}
	} else {
		res.Status, res.Err = StatusFailed, truncate(runErr.Error(), 4000)
		res.Attempt = w.attempt(id, sweep.AttemptFailed, usedDir)
		if err := w.st.putFailed(id, filepath.Join(run.Dir, suiterun.FailedDir, id), res.Err); err != nil {
			w.giveBack(msg, id, fmt.Errorf("storing the failure: %w", err), res.Attempt)
			return
		}
		w.count(func(r *WorkerReport) { r.Failed++ })
	}
	w.count(func(r *WorkerReport) { r.Ran++ })
	w.finish(msg, res)
}

// attempt is the record of a discarded run of case id whose logs are in
// dir, nil if the run left none (it never started). A run whose logs
// cannot be read is recorded with the usage read so far, and this worker
// logs why.
func (w *worker) attempt(id, outcome, dir string) *sweep.Attempt {
	if !fileExists(dir) {
		return nil
	}
	u, err := sweep.ReadUsage(w.spec.Benchmark, dir)
	if err != nil {
		w.logf("reading the usage of %s's discarded run: %v", id, err)
	}
	return &sweep.Attempt{ID: sweep.NewAttemptID(), CaseID: id, Outcome: outcome, Usage: u}
}

// finish reports the stored outcome, then acks the case.
func (w *worker) finish(msg jetstream.Msg, res Result) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := w.js.Publish(ctx, w.n.resultSubject(), encode(res)); err != nil {
		// The attempt the result carried (a failed or duplicate run) is
		// reported again with the case handed back; its id is the same, so
		// it counts once if the result did arrive.
		w.giveBack(msg, res.Case, fmt.Errorf("reporting the result: %w", err), res.Attempt)
		return
	}
	if err := msg.DoubleAck(ctx); err != nil {
		w.logf("ack of %s: %v (it may be delivered again; it is counted once)", res.Case, err)
	}
	if res.Status == StatusFailed {
		w.logf("failed %s: %s", res.Case, peerText(res.Err, maxErrText)) // the error quotes the endpoint
	} else {
		w.logf("done %s", res.Case)
	}
}

// giveBack hands the case back to the queue for another delivery. The
// run's attempt, if any (nil: no run left artifacts), is reported first,
// so that the coordinator records the money it spent.
func (w *worker) giveBack(msg jetstream.Msg, id string, why error, att *sweep.Attempt) {
	w.logf("handing %s back: %v", id, why)
	if att != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res := Result{Case: id, Worker: w.opt.Name, Status: StatusReturned, Attempt: att}
		if cu := (*claimUnknownError)(nil); errors.As(why, &cu) {
			res.Object = cu.object
		}
		if _, err := w.js.Publish(ctx, w.n.resultSubject(), encode(res)); err != nil {
			w.logf("reporting the usage of %s's handed-back run: %v", id, err)
		}
		cancel()
	}
	msg.Nak()
	w.count(func(r *WorkerReport) { r.Returned++ })
}

// A case's scratch directory is named scratchPrefix+random and holds the
// file scratchExperiment (the experiment id) beside the suite directory.
const (
	scratchPrefix     = "coordbench-case-"
	scratchExperiment = "experiment"
)

// recoverScratch reports the model usage of the runs that workers killed
// outright (SIGKILL, a crash, a power cut) left in the scratch directory:
// for every scratch directory of this experiment that no live worker
// holds (atomicfs.HoldDir), each unfinished case's partial logs, read up
// to the last whole line, go to the coordinator as an interrupted
// attempt, and the directory is removed once reported. The attempt's id
// derives from the run's directory name, so a report repeated by a
// worker killed again counts once. Scratch directories of other
// experiments are left to their workers.
func (w *worker) recoverScratch(ctx context.Context) {
	root := w.opt.Scratch
	if root == "" {
		root = os.TempDir()
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), scratchPrefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		release, err := atomicfs.HoldDir(dir)
		if err != nil {
			continue // a live worker's
		}
		exp, err := os.ReadFile(filepath.Join(dir, scratchExperiment))
		if err == nil && string(exp) == w.spec.ID && w.recoverRun(ctx, dir) {
			os.RemoveAll(dir)
		}
		release()
	}
}

// recoverRun reports the unfinished cases of the scratch directory dir
// (recoverScratch); false if one could not be reported.
func (w *worker) recoverRun(ctx context.Context, dir string) bool {
	casesDir := filepath.Join(dir, "suite", sweep.CasesDir(w.spec.Benchmark))
	ents, _ := os.ReadDir(casesDir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), suiterun.TmpPrefix)
		k := strings.LastIndexByte(rest, '-')
		if !ok || !e.IsDir() || k < 0 || checkCaseID(rest[:k]) != nil {
			continue
		}
		id, run := rest[:k], filepath.Join(casesDir, e.Name())
		u, err := sweep.ReadPartialUsage(w.spec.Benchmark, run)
		if err != nil {
			w.logf("reading the usage of %s's run that a killed worker left in %s: %v", id, run, err)
		}
		if u.Calls == 0 && u.CachedCalls == 0 {
			continue
		}
		a := &sweep.Attempt{ID: sweep.LeftoverAttemptID(run), CaseID: id, Outcome: sweep.AttemptInterrupted, Usage: u}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err = w.js.Publish(pctx, w.n.resultSubject(), encode(Result{Case: id, Worker: w.opt.Name, Status: StatusReturned, Attempt: a}))
		cancel()
		if err != nil {
			w.logf("reporting the usage of %s's run that a killed worker left in %s: %v", id, run, err)
			return false
		}
		w.logf("recovered the usage of %s's run that a killed worker left (%d calls)", id, u.Calls)
	}
	return true
}

// safeRun runs one case, turning a panic into the case's error.
func safeRun(ctx context.Context, run RunCase, c CaseRun) (dir string, err error) {
	defer func() {
		if r := recover(); r != nil {
			dir, err = "", fmt.Errorf("panic: %v\n%s", r, truncate(string(debug.Stack()), 2000))
		}
	}()
	return run(ctx, c)
}
