package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
	"github.com/coordbench/coordbench/sweep"
	"github.com/coordbench/coordbench/sweep/jetstream"
)

// flakyStub answers as the des stub model while it has answers left and
// refuses every request after (401: a case fails at once).
type flakyStub struct {
	*httptest.Server
	left atomic.Int64
	// onRequest, if set, is called before each request is answered.
	onRequest atomic.Pointer[func()]
}

func newFlakyStub(t *testing.T, answers int64) *flakyStub {
	t.Helper()
	stub, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	s := &flakyStub{}
	s.left.Store(answers)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := s.onRequest.Load(); f != nil {
			(*f)()
		}
		if s.left.Add(-1) < 0 {
			http.Error(w, `{"error":{"message":"invalid key"}}`, http.StatusUnauthorized)
			return
		}
		stub.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// oneCaseExperiment returns a writer of a one-case des experiment with an
// LLM controller at url (cache: its cache line, or ""), into dir.
func oneCaseExperiment(t *testing.T) func(dir, url, cache string) string {
	return func(dir, url, cache string) string {
		os.MkdirAll(dir, 0o755)
		file := filepath.Join(dir, "e.yaml")
		body := "benchmark: des\ndes:\n  instances: gen:A2C4\n  paradigms: centralized\n  controllers: llm\n  seeds: 1\n" +
			"llm:\n  model: m\n  base_url: " + url + "/v1\n" + cache + "  price: {input: 1, output: 2}\n"
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
}

// cleanTotals runs exp's case once against the des stub model, in tmp,
// and returns the total row of its cost summary: what a run that nothing
// interrupted costs.
func cleanTotals(t *testing.T, exp func(dir, url, cache string) string, tmp string) map[string]string {
	t.Helper()
	clean := filepath.Join(tmp, "clean")
	if out, err := run(t, "sweep", "run", exp(filepath.Join(tmp, "c"), desStub(t).URL, ""), "--out", clean); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return totalRow(t, clean)
}

// totalRow is the total row of dir's cost_summary.csv, by column name.
func totalRow(t *testing.T, dir string) map[string]string {
	t.Helper()
	rows := csvRows(t, filepath.Join(dir, sweep.FileCostSummary))
	out := map[string]string{}
	for i, h := range rows[0] {
		out[h] = rows[len(rows)-1][i]
	}
	if out["model"] != "total" {
		t.Fatalf("last row of %s: %v", sweep.FileCostSummary, rows[len(rows)-1])
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSweepDiscardedAttemptsCounted: the money a failed attempt spent is
// still counted once the case is rerun, even when the rerun replays its
// calls from the response cache for free. A case fails after 3 answered
// calls, fails again (its 3 calls now cached, the fourth refused), then
// succeeds: attempts.jsonl holds both failed attempts, cost_summary.csv's
// discarded columns count 3 calls on 2 attempts, and its spent_usd, the
// finished case's cost plus the discarded attempts', is the cost of a
// clean run of the case, token for token. Status says so, and a cost
// limit counts the first attempt, whose failed/<id>/ was replaced by the
// second.
func TestSweepDiscardedAttemptsCounted(t *testing.T) {
	tmp := t.TempDir()
	exp := oneCaseExperiment(t)
	want := cleanTotals(t, exp, tmp)

	flaky := newFlakyStub(t, 3)
	file := exp(filepath.Join(tmp, "f"), flaky.URL, "  cache: cache.db\n")
	dir := filepath.Join(tmp, "run")
	for try := 1; try <= 2; try++ {
		if out, err := run(t, "sweep", "run", file, "--out", dir); err == nil {
			t.Fatalf("try %d: the case did not fail\n%s", try, out)
		}
		att, err := sweep.ReadAttempts(dir)
		if err != nil || len(att) != try || att[0].Calls != 3 || att[try-1].Outcome != sweep.AttemptFailed {
			t.Fatalf("try %d: ledger %+v, %v", try, att, err)
		}
	}
	got := totalRow(t, dir)
	if got["cases"] != "0" || got["discarded_attempts"] != "2" || got["discarded_calls"] != "3" || got["spent_usd"] != got["discarded_cost_usd"] || num(t, got["spent_usd"]) == 0 {
		t.Errorf("after two failed attempts: %v", got)
	}
	if rows := csvRows(t, filepath.Join(dir, sweep.FileCostAttempts)); len(rows) != 3 || rows[1][2] != sweep.AttemptFailed {
		t.Errorf("%s: %v", sweep.FileCostAttempts, rows)
	}
	// The second attempt replayed the first's calls: its failed/<id>/
	// shows no billed call. The limit still counts the first attempt.
	limit := num(t, want["cost_usd"]) + num(t, got["discarded_cost_usd"])/2
	out, err := run(t, "sweep", "run", file, "--out", dir, "--cost-limit", strconv.FormatFloat(limit, 'f', -1, 64))
	if err == nil || !strings.Contains(out, "cost limit: 1 case not started") {
		t.Errorf("--cost-limit %v (the estimate plus half the first attempt's cost): %v\n%s", limit, err, out)
	}

	flaky.left.Store(1 << 30)
	if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	} else if !strings.Contains(out, "on 2 discarded attempts (3 calls)") {
		t.Errorf("sweep run does not print the discarded attempts:\n%s", out)
	}
	got = totalRow(t, dir)
	for _, k := range []string{"input_tokens", "output_tokens"} {
		if a, b := num(t, got[k])+num(t, got["discarded_"+k]), num(t, want[k]); a != b {
			t.Errorf("%s: %v finished + discarded, want %v as in a clean run", k, a, b)
		}
	}
	if got["cached_calls"] != "3" || num(t, got["calls"])+3 != num(t, want["calls"]) {
		t.Errorf("calls: %v", got)
	}
	if a, b := num(t, got["spent_usd"]), num(t, want["cost_usd"]); a < b-2e-6 || a > b+2e-6 {
		t.Errorf("spent %v, want %v as a clean run (got %v)", a, b, got)
	}
	t.Logf("clean %v\nretried %v", want, got)
	st, err := run(t, "sweep", "status", dir)
	if err != nil || !strings.Contains(st, "on 2 discarded attempts") || !strings.Contains(st, "spent: $"+got["spent_usd"]) {
		t.Errorf("status: %v\n%s", err, st)
	}
}

// TestDistDiscardedAttemptsCounted: in a distributed sweep the worker
// reports the usage of a failed run and of a run it hands back, and the
// coordinator records both in the experiment directory's ledger, which
// its cost files and sweep status count: a case fails after 3 answered
// calls (object store: failed/<id>/ keeps only the error); serving again,
// a worker stopped hard (abort) while running it hands it back, and
// another finishes it.
func TestDistDiscardedAttemptsCounted(t *testing.T) {
	flaky := newFlakyStub(t, 3)
	tmp := t.TempDir()
	file := llmExperiment(t, tmp, flaky.URL, "1", "  price: {input: 1, output: 2}\n")
	emb := startNATS(t)
	ctx := context.Background()
	out := filepath.Join(tmp, "dist")
	wcfg := workerConfig{natsURL: emb.URL(), out: out, slots: 1, scratch: t.TempDir(), experimentDir: "."}

	serve := served(t, ctx, serveConfig{file: file, out: out, natsURL: emb.URL(), store: jetstream.StoreObject})
	wcfg.name = "a"
	ws := workers(ctx, 1, wcfg, nil)
	if err := wait(t, serve, "serve"); err == nil || !strings.Contains(err.Error(), "1 of 1 cases did not finish") {
		t.Fatalf("first serve: %v", err)
	}
	wait(t, ws, "worker")
	att, err := sweep.ReadAttempts(out)
	if err != nil || len(att) != 1 || att[0].Outcome != sweep.AttemptFailed || att[0].Calls != 3 || att[0].InputTokens == 0 {
		t.Fatalf("ledger after the failed run: %+v, %v", att, err)
	}
	if got := totalRow(t, out); got["discarded_attempts"] != "1" || got["discarded_calls"] != "3" {
		t.Errorf("cost summary after the failed run: %v", got)
	}

	// Second serve: the first worker is stopped hard (abort) at its
	// run's third model call; the run is cut short and the worker hands
	// the case back with the usage of its run.
	flaky.left.Store(1 << 30)
	serve = served(t, ctx, serveConfig{file: file, out: out, natsURL: emb.URL(), store: jetstream.StoreObject})
	abort, stop := context.WithCancel(ctx)
	var calls atomic.Int64
	hook := func() {
		if calls.Add(1) == 3 {
			stop()
		}
	}
	flaky.onRequest.Store(&hook)
	stopped := make(chan error, 1)
	go func() {
		c := wcfg
		c.name = "stopped"
		_, err := runWorker(abort, abort, c, io.Discard, nil)
		stopped <- err
	}()
	wait(t, stopped, "the stopped worker")
	flaky.onRequest.Store(nil)
	wcfg.name = "b"
	ws = workers(ctx, 1, wcfg, nil)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	wait(t, ws, "worker")
	att, err = sweep.ReadAttempts(out)
	got := totalRow(t, out)
	if err != nil || len(att) != 2 || att[1].Outcome != sweep.AttemptReturned || att[1].Calls < 2 || float64(att[1].Calls) >= num(t, got["calls"]) {
		t.Fatalf("ledger after the second serve: %+v, %v; want a returned run cut short, with fewer calls than the finished one's %s", att, err, got["calls"])
	}
	if got["cases"] != "1" || got["discarded_attempts"] != "2" || num(t, got["spent_usd"]) <= num(t, got["cost_usd"]) {
		t.Errorf("cost summary: %v", got)
	}
	if st, err := run(t, "sweep", "status", out); err != nil || !strings.Contains(st, "on 2 discarded attempts") {
		t.Errorf("status: %v\n%s", err, st)
	}
}

// TestDistDuplicateRunCounted: with the object store, two deliveries of
// one case that finish at once both try to store it (the first worker
// looked dead: the workers' consumer was replaced, as if its heartbeats
// were lost, so the case went to a second worker while the first still
// ran it). One run is kept; the other's worker reports a duplicate run
// with its usage, which serve records in the ledger and the cost files
// and status count. The other case waits until both results are in, so
// that serve is still collecting when the second arrives.
func TestDistDuplicateRunCounted(t *testing.T) {
	stub := desStub(t)
	tmp := t.TempDir()
	file := llmExperiment(t, tmp, stub.URL, "1, 2", "  price: {input: 1, output: 2}\n")
	emb := startNATS(t)
	ctx := context.Background()
	out := filepath.Join(tmp, "dist")
	serve := served(t, ctx, serveConfig{file: file, out: out, natsURL: emb.URL(), store: jetstream.StoreObject})

	var mu sync.Mutex
	dup := ""                // the case both workers run: the first one delivered
	ran := make(chan string) // the experiment id, once per run of dup, which then waits for release
	release, rest := make(chan struct{}), make(chan struct{})
	wrap := func(run jetstream.RunCase) jetstream.RunCase {
		return func(ctx context.Context, c jetstream.CaseRun) (string, error) {
			mu.Lock()
			if dup == "" {
				dup = c.ID
			}
			isDup := c.ID == dup
			mu.Unlock()
			if !isDup {
				<-rest
				return run(ctx, c)
			}
			dir, err := run(ctx, c)
			ran <- c.Spec.ID
			<-release
			return dir, err
		}
	}
	nextRun := func() string {
		select {
		case id := <-ran:
			return id
		case <-time.After(2 * time.Minute):
			t.Fatal("no run of the case")
			return ""
		}
	}
	wcfg := workerConfig{natsURL: emb.URL(), out: out, slots: 1, scratch: t.TempDir(), experimentDir: ".", name: "a"}
	wa := workers(ctx, 1, wcfg, wrap)
	id := nextRun()

	nc, err := nats.Connect(emb.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cases := "CB_CASES_" + id[:16]
	cons, err := js.Consumer(ctx, cases, jetstream.ConsumerName)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cons.CachedInfo().Config
	if err := js.DeleteConsumer(ctx, cases, jetstream.ConsumerName); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateConsumer(ctx, cases, cfg); err != nil {
		t.Fatal(err)
	}
	wcfg.name = "b"
	wb := workers(ctx, 1, wcfg, wrap)
	nextRun()
	close(release) // both runs store the case at once

	results, err := js.Stream(ctx, "CB_RESULTS_"+id[:16])
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		info, err := results.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d results of the case run twice, want 2", info.State.Msgs)
		}
	}
	close(rest)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	wait(t, wa, "worker a")
	wait(t, wb, "worker b")

	att, err := sweep.ReadAttempts(out)
	if err != nil || len(att) != 1 || att[0].CaseID != dup || att[0].Outcome != sweep.AttemptDuplicate || att[0].Calls == 0 || att[0].InputTokens == 0 {
		t.Fatalf("ledger %+v, %v; want one duplicate run of %s, with its usage", att, err, dup)
	}
	got := totalRow(t, out)
	if got["cases"] != "2" || got["discarded_attempts"] != "1" || got["discarded_calls"] != fmt.Sprint(att[0].Calls) || num(t, got["spent_usd"]) <= num(t, got["cost_usd"]) {
		t.Errorf("cost summary: %v", got)
	}
	if st, err := run(t, "sweep", "status", out); err != nil || !strings.Contains(st, "on 1 discarded attempts") {
		t.Errorf("status: %v\n%s", err, st)
	}
}

// TestDistAbortStoresFinishedRun: a worker told to stop (abort) after its
// run has finished stores the case rather than hand back a result that
// was paid for.
func TestDistAbortStoresFinishedRun(t *testing.T) {
	stub := desStub(t)
	tmp := t.TempDir()
	file := llmExperiment(t, tmp, stub.URL, "1", "")
	emb := startNATS(t)
	ctx := context.Background()
	out := filepath.Join(tmp, "dist")
	serve := served(t, ctx, serveConfig{file: file, out: out, natsURL: emb.URL()})
	abort, stop := context.WithCancel(ctx)
	rep, err := runWorker(abort, abort, workerConfig{natsURL: emb.URL(), out: out, slots: 1, name: "w", scratch: t.TempDir(), experimentDir: "."}, io.Discard,
		func(run jetstream.RunCase) jetstream.RunCase {
			return func(ctx context.Context, c jetstream.CaseRun) (string, error) {
				dir, err := run(ctx, c)
				stop()
				return dir, err
			}
		})
	if err != nil || rep.Ran != 1 || rep.Returned != 0 {
		t.Fatalf("worker: %+v, %v; want the finished run stored, none handed back", rep, err)
	}
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	if att, err := sweep.ReadAttempts(out); err != nil || len(att) != 0 {
		t.Errorf("ledger: %+v, %v; want no discarded attempt", att, err)
	}
}

// TestDistWorkerRefusesOtherInputs: serve publishes what it resolved the
// experiment from (the instance files' contents, the paradigms, the
// version); a worker whose --experiment-dir holds another version of an
// instance file refuses the experiment before it takes a case, naming
// the instance, and leaves the case to a worker with the same file, which
// runs it: no case fails, no attempt is recorded.
func TestDistWorkerRefusesOtherInputs(t *testing.T) {
	tmp := t.TempDir()
	plant := mustRead(t, filepath.Join("..", "..", "examples", "my_plant.yaml"))
	exp := "benchmark: des\ndes:\n  instances: [my_plant.yaml]\n  paradigms: centralized\n  controllers: rule\n  seeds: [1]\n"
	serveDir, workDir := filepath.Join(tmp, "serve"), filepath.Join(tmp, "worker")
	for d, p := range map[string][]byte{serveDir: plant, workDir: []byte(strings.Replace(string(plant), "horizon: 3600", "horizon: 3000", 1))} {
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, "my_plant.yaml"), p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "e.yaml"), []byte(exp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	emb := startNATS(t)
	ctx := context.Background()
	out := filepath.Join(tmp, "dist")
	serve := served(t, ctx, serveConfig{file: filepath.Join(serveDir, "e.yaml"), out: out, natsURL: emb.URL()})
	rep, err := runWorker(ctx, ctx, workerConfig{natsURL: emb.URL(), out: out, slots: 1, name: "other", scratch: t.TempDir(), experimentDir: workDir}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "instance file-my_plant: this worker's has SHA-256") || rep == nil || rep.Ran != 0 {
		t.Fatalf("a worker of another instance file: %+v, %v; want it refused before any case", rep, err)
	}
	ws := workers(ctx, 1, workerConfig{natsURL: emb.URL(), out: out, slots: 1, name: "same", scratch: t.TempDir(), experimentDir: serveDir}, nil)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatalf("serve: %v", err)
	}
	wait(t, ws, "worker")
	if st, _ := jetstream.ReadStatus(out); st == nil || st.Done != 1 || st.Failed != 0 {
		t.Errorf("status %+v: want the case done by the worker with the same file", st)
	}
}

// TestSweepKilledRunCounted: a sweep run killed outright (SIGKILL) in the
// middle of a model-backed case leaves the case's partial logs in a
// temporary directory; the next run records them in the ledger as an
// interrupted attempt before removing them, so that the calls the killed
// run paid for (which the response cache then replays free) are counted.
// Finished plus discarded usage equals a clean run's; the cost limit of
// that next run counts the attempt already.
func TestSweepKilledRunCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := coordbenchBinary(t)
	tmp := t.TempDir()
	exp := oneCaseExperiment(t)
	want := cleanTotals(t, exp, tmp)

	// The stub answers three calls, then holds the fourth until released.
	stub := newFlakyStub(t, 1<<30)
	var calls atomic.Int64
	fourth, release := make(chan struct{}), make(chan struct{})
	hold := func() {
		if calls.Add(1) == 4 {
			close(fourth)
			<-release
		}
	}
	stub.onRequest.Store(&hold)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	file := exp(filepath.Join(tmp, "k"), stub.URL, "  cache: cache.db\n")
	dir := filepath.Join(tmp, "run")
	cmd := exec.Command(bin, "sweep", "run", file, "--out", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fourth: // three answers are in decisions.jsonl: decisions are sequential here
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the fourth call never came")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	close(release)
	if att, _ := sweep.ReadAttempts(dir); len(att) != 0 {
		t.Fatalf("ledger before the rerun: %+v", att)
	}

	// The killed run's partial logs, as the next run will find them.
	tmps, _ := filepath.Glob(filepath.Join(dir, "cases", ".tmp-*"))
	if len(tmps) != 1 {
		t.Fatalf("temporaries of the killed run: %v", tmps)
	}
	killed, err := sweep.ReadPartialUsage(sweep.BenchmarkDes, tmps[0])
	if err != nil || killed.Calls != 3 {
		t.Fatalf("the killed run's logs: %+v, %v", killed, err)
	}
	killedCost := killed.Cost(sweep.Price{Input: 1, Output: 2})
	// Status shows that money apart until a rerun records it.
	if st, err := run(t, "sweep", "status", dir); err != nil || !strings.Contains(st, "not ended: 1 model-backed case runs in flight or left by a killed run, $"+
		strconv.FormatFloat(killedCost, 'f', 6, 64)+" so far") {
		t.Errorf("status after the kill: %v\n%s", err, st)
	}
	// Kept aside, to play a run killed after it recorded the leftover,
	// halfway through removing it.
	aside := filepath.Join(tmp, "aside")
	if err := sweep.CopyTree(tmps[0], aside, 0); err != nil {
		t.Fatal(err)
	}
	// A rerun whose limit is the clean cost plus half the killed run's:
	// the interrupted attempt, counted as the run starts, keeps the case
	// from starting.
	limit := num(t, want["cost_usd"]) + killedCost/2
	out, err := run(t, "sweep", "run", file, "--out", dir, "--cost-limit", strconv.FormatFloat(limit, 'f', -1, 64))
	if err == nil || !strings.Contains(out, "cost limit: 1 case not started") {
		t.Errorf("--cost-limit %v (the estimate plus half the killed run's cost): %v\n%s", limit, err, out)
	}
	// The same leftover again, a file short: recorded already, it counts
	// once, in status too.
	if err := os.Remove(filepath.Join(aside, "trace.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, tmps[0]); err != nil {
		t.Fatal(err)
	}
	if st, err := run(t, "sweep", "status", dir); err != nil || strings.Contains(st, "not ended") {
		t.Errorf("status with a recorded leftover: %v\n%s", err, st)
	}
	if out, err := run(t, "sweep", "run", file, "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	} else if !strings.Contains(out, "on 1 discarded attempt") {
		t.Errorf("sweep run does not print the discarded attempt:\n%s", out)
	}
	if st, err := run(t, "sweep", "status", dir); err != nil || strings.Contains(st, "not ended") {
		t.Errorf("status after the rerun: %v\n%s", err, st)
	}
	att, err := sweep.ReadAttempts(dir)
	if err != nil || len(att) != 1 || att[0].Outcome != sweep.AttemptInterrupted || att[0].Usage != killed {
		t.Fatalf("ledger after the rerun: %+v, %v", att, err)
	}
	got := totalRow(t, dir)
	for _, k := range []string{"input_tokens", "output_tokens"} {
		if a, b := num(t, got[k])+num(t, got["discarded_"+k]), num(t, want[k]); a != b {
			t.Errorf("%s: %v finished + discarded, want %v as in a clean run", k, a, b)
		}
	}
	if got["cached_calls"] != "3" || got["discarded_attempts"] != "1" {
		t.Errorf("after the rerun: %v", got)
	}
	if a, b := num(t, got["spent_usd"]), num(t, want["cost_usd"]); a < b-2e-6 || a > b+2e-6 {
		t.Errorf("spent %v, want %v as a clean run (got %v)", a, b, got)
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("temporary left: %s", path)
		}
		return nil
	})
}
