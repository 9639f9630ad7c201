package jetstream

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/coordbench/coordbench/sweep"
)

// okFile marks a finished case directory in these tests: finishedIn
// stands for the suite's check of its manifest and hashes.
const okFile = "ok"

func finishedIn(casesDir string) func(string) bool {
	return func(id string) bool { return fileExists(filepath.Join(casesDir, id, okFile)) }
}

// writeCase writes a case directory id under casesDir: finished (with
// okFile) or not (a torn one, or one of an earlier version).
func writeCase(t *testing.T, casesDir, id string, finished bool) {
	t.Helper()
	dir := filepath.Join(casesDir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "metrics.json.partial"
	if finished {
		name = okFile
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(id), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A stale case directory in the shared directory (torn, or of an earlier
// version) is not "stored already": the worker runs the case, and its
// run replaces the stale directory. A finished one is kept.
func TestStaleCaseDirectoryReplaced(t *testing.T) {
	dir := t.TempDir()
	casesDir := filepath.Join(dir, sweep.CasesDir(sweep.BenchmarkDes))
	st := &store{spec: &Spec{MaxCaseBytes: 1 << 20}, dir: dir, casesDir: sweep.CasesDir(sweep.BenchmarkDes), finished: finishedIn(casesDir)}
	writeCase(t, casesDir, "stale-1", false)
	writeCase(t, casesDir, "done-1", true)
	ctx := context.Background()
	if has, err := st.has(ctx, "stale-1"); err != nil || has {
		t.Errorf("has(stale-1) = %v, %v: want not stored", has, err)
	}
	if has, err := st.has(ctx, "done-1"); err != nil || !has {
		t.Errorf("has(done-1) = %v, %v: want stored", has, err)
	}
	for _, id := range []string{"stale-1", "done-1"} {
		run := filepath.Join(t.TempDir(), id)
		writeCase(t, filepath.Dir(run), id, true)
		os.WriteFile(filepath.Join(run, "who"), []byte("rerun"), 0o644)
		stored, err := st.put(ctx, id, run, filepath.Join(t.TempDir(), "none.db"), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(casesDir, id, "who"))
		if id == "stale-1" && (!stored || string(b) != "rerun" || !fileExists(filepath.Join(casesDir, id, okFile))) {
			t.Errorf("stale-1: stored %v, who %q: want the rerun in place of the stale directory", stored, b)
		}
		if id == "done-1" && (stored || len(b) != 0) {
			t.Errorf("done-1: stored %v, who %q: want the finished directory kept", stored, b)
		}
	}
	ents, _ := os.ReadDir(casesDir)
	if len(ents) != 2 {
		t.Errorf("cases directory holds %d entries, want 2 (no stale leftovers)", len(ents))
	}
}

// A worker that reports a case done whose stored directory is not a
// finished case (it found a stale one and took it for stored, or forged
// it) does not make serve count the case done: serve sets the directory
// aside and publishes the case again, and counts it done once a run of
// it is finished.
func TestServeRerunsAStaleCase(t *testing.T) {
	emb := startTestServer(t)
	nc := connect(t, emb.URL())
	dir := t.TempDir()
	casesDir := filepath.Join(dir, sweep.CasesDir(sweep.BenchmarkDes))
	spec := &Spec{ID: storeTestID, Benchmark: sweep.BenchmarkDes, Store: StoreFS, AckWait: time.Minute, MaxDeliver: 3, MaxCaseBytes: 1 << 20}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan served, 1)
	go func() {
		out, err := Serve(ctx, nc, ServeOptions{Spec: spec, IDs: []string{"c-1"}, Dir: dir, Log: io.Discard, CaseFinished: finishedIn(casesDir)})
		done <- served{out, err}
	}()
	js, err := jetstream.New(connect(t, emb.URL()))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := namesOf(spec.ID)
	var cons jetstream.Consumer
	for cons == nil {
		if cons, err = js.Consumer(ctx, n.caseStream(), ConsumerName); err != nil {
			select {
			case <-ctx.Done():
				t.Fatal("serve set up no consumer")
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	// deliver takes the next delivery of c-1, stores the case as
	// finished or not, and reports it done.
	deliver := func(finished bool) {
		t.Helper()
		m := nextDelivery(t, ctx, cons, done)
		writeCase(t, casesDir, m.Headers().Get(caseHeader), finished)
		reportDone(t, ctx, js, n, m)
	}
	deliver(false)
	deliver(true)
	s := <-done
	if s.err != nil || s.out.Done != 1 || len(s.out.Failed) != 0 {
		t.Fatalf("serve: %+v, %v: want c-1 done", s.out, s.err)
	}
	if !fileExists(filepath.Join(casesDir, "c-1", okFile)) {
		t.Error("c-1 is not the finished run")
	}
}

// served is what Serve returned.
type served struct {
	out *Outcome
	err error
}

// nextDelivery is the next case message of cons, failing the test if
// serve ends first.
func nextDelivery(t *testing.T, ctx context.Context, cons jetstream.Consumer, done <-chan served) jetstream.Msg {
	t.Helper()
	for {
		m, err := cons.Next(jetstream.FetchMaxWait(time.Second))
		if err == nil {
			return m
		}
		select {
		case s := <-done:
			t.Fatalf("serve ended (%+v, %v) before delivering the case again", s.out, s.err)
		case <-ctx.Done():
			t.Fatal("no delivery")
		default:
		}
	}
}

// reportDone reports the case of m done, as a worker does, and acks m.
func reportDone(t *testing.T, ctx context.Context, js jetstream.JetStream, n names, m jetstream.Msg) {
	t.Helper()
	id := m.Headers().Get(caseHeader)
	if _, err := js.Publish(ctx, n.resultSubject(), encode(Result{Case: id, Worker: "w", Status: StatusDone})); err != nil {
		t.Fatal(err)
	}
	m.DoubleAck(ctx)
}

// A case claimed in the object store by a run that is not a finished
// case (of an earlier version, torn, forged) is not counted done when
// serve starts: serve deletes its claim and object and publishes it; a
// rerun claims it anew and is the case serve counts.
func TestServeRerunsAStaleObject(t *testing.T) {
	spec, url, open := testObjectStore(t)
	st := open()
	if !putRun(t, st, "c-1", "stale") {
		t.Fatal("the stale run was not stored")
	}
	dir := t.TempDir()
	casesDir := filepath.Join(dir, sweep.CasesDir(spec.Benchmark))
	good := func(id string) bool {
		b, _ := os.ReadFile(filepath.Join(casesDir, id, "who.txt"))
		return string(b) == "good"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := *spec
	s.ObjectClaims = false // serve sets it
	done := make(chan served, 1)
	go func() {
		out, err := Serve(ctx, connect(t, url), ServeOptions{Spec: &s, IDs: []string{"c-1"}, Dir: dir, Log: io.Discard, CaseFinished: good})
		done <- served{out, err}
	}()
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := namesOf(spec.ID)
	cons, err := js.Consumer(ctx, n.caseStream(), ConsumerName)
	if err != nil {
		t.Fatal(err)
	}
	m := nextDelivery(t, ctx, cons, done)
	if !putRun(t, st, "c-1", "good") {
		t.Fatal("the rerun could not claim the case: its stale claim is still there")
	}
	reportDone(t, ctx, js, n, m)
	r := <-done
	if r.err != nil || r.out.Done != 1 || r.out.Kept != 0 {
		t.Fatalf("serve: %+v, %v: want c-1 done by the rerun", r.out, r.err)
	}
	if !good("c-1") {
		t.Error("serve's directory does not hold the rerun")
	}
}
