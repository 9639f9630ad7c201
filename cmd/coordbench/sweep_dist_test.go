package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
	"github.com/coordbench/coordbench/sweep"
	"github.com/coordbench/coordbench/sweep/jetstream"
)

// The distributed sweep's tests run a real embedded nats-server with
// JetStream on 127.0.0.1 (a free port, a temporary store): no mocks.

// startNATS starts an embedded server for one test.
func startNATS(t testing.TB) *jetstream.Embedded {
	t.Helper()
	emb, err := jetstream.StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	return emb
}

// slowStub is the des stub model (llmctl builtin) behind a latency, on
// loopback, counting requests (in all and per model asked for) and their
// arrival times.
type slowStub struct {
	*httptest.Server
	n      atomic.Int64
	mu     sync.Mutex
	times  []time.Time
	models map[string]int64
}

// perModel is a copy of the requests counted per model.
func (s *slowStub) perModel() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.models)
}

func newSlowStub(t testing.TB, delay time.Duration) *slowStub {
	t.Helper()
	st, err := despolicy.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	s := &slowStub{models: map[string]int64{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Model string `json:"model"`
		}
		json.Unmarshal(body, &req)
		s.mu.Lock()
		s.times = append(s.times, time.Now())
		s.models[req.Model]++
		s.mu.Unlock()
		s.n.Add(1)
		time.Sleep(delay)
		st.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// llmExperiment writes a des experiment of len(seeds) model-bound cases
// (the llm controller against the stub on a small generated plant,
// about 8 model calls a case) and returns its path.
func llmExperiment(t testing.TB, dir, baseURL string, seeds string, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "exp.yaml")
	body := fmt.Sprintf(`benchmark: des
des:
  instances: ["gen:A1C6J1"]
  paradigms: [centralized]
  controllers: [llm]
  seeds: [%s]
llm:
  model: stub
  base_url: %s/v1
%s`, seeds, baseURL, extra)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// served runs sweep serve on an existing NATS server in the background.
func served(t testing.TB, ctx context.Context, cfg serveConfig) <-chan error {
	t.Helper()
	if cfg.store == "" {
		cfg.store = jetstream.StoreFS
	}
	if cfg.ackWait == 0 {
		cfg.ackWait = 2 * time.Second
	}
	if cfg.maxDeliver == 0 {
		cfg.maxDeliver = 3
	}
	cfg.maxCaseBytes = jetstream.DefaultMaxCaseBytes
	errc := make(chan error, 1)
	go func() { errc <- runServe(ctx, cfg, io.Discard, nil) }()
	return errc
}

// workers runs k in-process workers in the background; wrap, if set,
// wraps their case runner.
func workers(ctx context.Context, k int, cfg workerConfig, wrap func(jetstream.RunCase) jetstream.RunCase) <-chan error {
	errc := make(chan error, k)
	for i := range k {
		c := cfg
		c.name = fmt.Sprintf("%s%d", cfg.name, i)
		go func() {
			_, err := runWorker(ctx, ctx, c, io.Discard, wrap)
			errc <- err
		}()
	}
	return errc
}

func wait(t testing.TB, errc <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not end", what)
		return nil
	}
}

func sameSummaries(t *testing.T, a, b string, files []string) {
	t.Helper()
	for _, f := range files {
		x, y := mustRead(t, filepath.Join(a, f)), mustRead(t, filepath.Join(b, f))
		if string(x) != string(y) {
			t.Errorf("%s differs from the single-machine run's:\n%s\n---\n%s", f, y, x)
		}
	}
}

// TestDistThreeWorkersLikeOneRun: three workers on one served sweep give
// summary files byte-identical to a single-machine sweep run, with cases
// in the shared directory (des) and in the object store (silo).
func TestDistThreeWorkersLikeOneRun(t *testing.T) {
	for i, x := range experiments {
		store := []string{jetstream.StoreFS, jetstream.StoreObject}[i]
		t.Run(filepath.Base(x.file)+"/"+store, func(t *testing.T) {
			tmp := t.TempDir()
			whole := filepath.Join(tmp, "whole")
			if out, err := run(t, "sweep", "run", x.file, "--out", whole); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			emb := startNATS(t)
			ctx := context.Background()
			out := filepath.Join(tmp, "dist")
			serve := served(t, ctx, serveConfig{file: x.file, out: out, natsURL: emb.URL(), store: store})
			wcfg := workerConfig{natsURL: emb.URL(), slots: 1, name: "w", scratch: t.TempDir(), experimentDir: "."}
			if store == jetstream.StoreFS {
				wcfg.out = out
				waitMarker(t, out) // a worker on the shared directory checks it is serve's
			}
			ws := workers(ctx, 3, wcfg, nil)
			if err := wait(t, serve, "serve"); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := wait(t, ws, "worker"); err != nil {
					t.Errorf("worker: %v", err)
				}
			}
			sameSummaries(t, out, whole, x.files)
			st, err := jetstream.ReadStatus(out)
			if err != nil || st.State != jetstream.StateDone || st.Done != st.Cases || st.Failed+st.DeadLetter+st.Pending+st.Running != 0 {
				t.Errorf("status: %+v, %v", st, err)
			}
		})
	}
}

// waitMarker waits until serve has marked the directory.
func waitMarker(t *testing.T, dir string) {
	t.Helper()
	testenv.Wait(t, "serve to mark "+dir, func() bool {
		_, err := sweep.ReadMarker(dir)
		return err == nil
	})
}

// TestDistWorkerPanicDoesNotStopSweep: a panic in one case is that case's
// error; the worker goes on with the others, serve reports the case as
// failed (exit non-zero) and serving again retries only it.
func TestDistWorkerPanicDoesNotStopSweep(t *testing.T) {
	x := experiments[1] // silo-small
	tmp := t.TempDir()
	whole := filepath.Join(tmp, "whole")
	if out, err := run(t, "sweep", "run", x.file, "--out", whole); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	emb := startNATS(t)
	ctx := context.Background()
	out := filepath.Join(tmp, "dist")
	serve := served(t, ctx, serveConfig{file: x.file, out: out, natsURL: emb.URL()})
	waitMarker(t, out)
	var once sync.Once
	var victim string
	panicky := func(run jetstream.RunCase) jetstream.RunCase {
		return func(ctx context.Context, c jetstream.CaseRun) (string, error) {
			once.Do(func() { victim = c.ID })
			if c.ID == victim {
				panic("boom in " + c.ID)
			}
			return run(ctx, c)
		}
	}
	ws := workers(ctx, 1, workerConfig{natsURL: emb.URL(), out: out, slots: 1, name: "p", scratch: t.TempDir(), experimentDir: "."}, panicky)
	err := wait(t, serve, "serve")
	if err == nil || !strings.Contains(err.Error(), "failed "+victim+": panic: boom") || !strings.Contains(err.Error(), "1 of 8 cases") {
		t.Fatalf("serve: %v; want case %s failed with its panic", err, victim)
	}
	if err := wait(t, ws, "worker"); err != nil {
		t.Fatalf("the worker stopped: %v", err)
	}
	if st, _ := jetstream.ReadStatus(out); st == nil || st.Done != 7 || st.Failed != 1 {
		t.Fatalf("status: %+v", st)
	}
	// Serving again publishes only the failed case.
	serve = served(t, ctx, serveConfig{file: x.file, out: out, natsURL: emb.URL()})
	ws = workers(ctx, 1, workerConfig{natsURL: emb.URL(), out: out, slots: 1, name: "q", scratch: t.TempDir(), experimentDir: "."}, nil)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, ws, "worker"); err != nil {
		t.Fatal(err)
	}
	if st, _ := jetstream.ReadStatus(out); st == nil || st.Done != 8 || st.Deliveries != 1 {
		t.Errorf("status of the second serve: %+v; want 8 done, 1 result (only the failed case rerun)", st)
	}
	sameSummaries(t, out, whole, x.files)
}

// TestDistServeResumes: serve interrupted before any worker came leaves
// its queue; serving again publishes nothing twice (each case is run and
// reported once) and finishes the sweep.
func TestDistServeResumes(t *testing.T) {
	x := experiments[1] // silo-small
	tmp := t.TempDir()
	emb := startNATS(t)
	out := filepath.Join(tmp, "dist")
	ctx, cancel := context.WithCancel(context.Background())
	serve := served(t, ctx, serveConfig{file: x.file, out: out, natsURL: emb.URL(), store: jetstream.StoreObject})
	testenv.Wait(t, "8 pending cases in the status", func() bool {
		st, _ := jetstream.ReadStatus(out)
		return st != nil && st.Pending == 8
	})
	cancel()
	if err := wait(t, serve, "serve"); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("serve: %v; want interrupted", err)
	}
	bg := context.Background()
	serve = served(t, bg, serveConfig{file: x.file, out: out, natsURL: emb.URL(), store: jetstream.StoreObject})
	ws := workers(bg, 2, workerConfig{natsURL: emb.URL(), slots: 1, name: "r", scratch: t.TempDir(), experimentDir: "."}, nil)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := wait(t, ws, "worker"); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := jetstream.ReadStatus(out); st == nil || st.Done != 8 || st.Deliveries != 8 {
		t.Errorf("status: %+v; want 8 done from 8 results", st)
	}
}

// startEvents collects the start events of experiment file's cases.
func startEvents(t *testing.T, url, file string) <-chan jetstream.Event {
	t.Helper()
	e, err := sweep.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ch := make(chan jetstream.Event, 64)
	if _, err := nc.Subscribe(jetstream.EventSubject(e.ID()), func(m *nats.Msg) {
		var ev jetstream.Event
		if json.Unmarshal(m.Data, &ev) == nil {
			ch <- ev
		}
	}); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	return ch
}

// startAndKill starts a worker process, waits until it has started a case
// and made a model call of it, and kills it (SIGKILL): mid-case, since a
// case takes several calls. It returns the case.
func startAndKill(t *testing.T, bin, url, out string, stub *slowStub, events <-chan jetstream.Event, name string) string {
	t.Helper()
	cmd := exec.Command(bin, "worker", "--nats", url, "--out", out, "--scratch", t.TempDir(), "--name", name)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ev jetstream.Event
	for ev.Worker != name {
		select {
		case ev = <-events:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Fatalf("worker %s started no case", name)
		}
	}
	before := stub.n.Load()
	t.Cleanup(func() { cmd.Process.Kill() }) // if the wait fails
	testenv.Wait(t, "worker "+name+"'s next model call", func() bool { return stub.n.Load() != before })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(out, "cases", ev.Case)); err == nil {
		t.Fatalf("case %s was stored although its worker was killed mid-case", ev.Case)
	}
	return ev.Case
}

// TestDistWorkerKilledMidCase: a worker process killed with SIGKILL in
// the middle of a case loses nothing and double-counts nothing: the case
// is delivered again after the ack wait, and the summaries are the
// single-machine run's. The workers' response caches, merged by serve,
// then replay the experiment offline on one machine.
func TestDistWorkerKilledMidCase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills a worker process")
	}
	bin := coordbenchBinary(t)
	stub := newSlowStub(t, 50*time.Millisecond)
	tmp := t.TempDir()
	file := llmExperiment(t, tmp, stub.URL, "1, 2, 3", "")
	files := experiments[0].files
	whole := filepath.Join(tmp, "whole")
	if out, err := run(t, "sweep", "run", file, "--out", whole, "--workers", "3"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	emb := startNATS(t)
	ctx := context.Background()
	out := filepath.Join(tmp, "dist")
	events := startEvents(t, emb.URL(), file)
	serve := served(t, ctx, serveConfig{file: file, out: out, natsURL: emb.URL()})
	waitMarker(t, out)
	killed := startAndKill(t, bin, emb.URL(), out, stub, events, "victim")
	ws := workers(ctx, 1, workerConfig{natsURL: emb.URL(), out: out, slots: 2, name: "rescuer", scratch: t.TempDir(), experimentDir: "."}, nil)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, ws, "worker"); err != nil {
		t.Fatal(err)
	}
	sameSummaries(t, out, whole, files)
	st, err := jetstream.ReadStatus(out)
	if err != nil || st.Done != 3 || st.Deliveries != 3 {
		t.Errorf("status %+v, %v: want 3 cases done, 3 results (the killed delivery reported none)", st, err)
	}
	if _, err := os.Stat(filepath.Join(out, "cases", killed)); err != nil {
		t.Errorf("the killed case %s was not run again: %v", killed, err)
	}

	// Replay offline from the merged cache: the stub is gone.
	stub.Close()
	rdir := filepath.Join(tmp, "replay")
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		t.Fatal(err)
	}
	// sweep collect carries the served directory's cache along.
	collected := filepath.Join(tmp, "collected")
	if o, err := run(t, "sweep", "collect", out, "--out", collected); err != nil {
		t.Fatalf("collect: %v\n%s", err, o)
	}
	replay := llmExperiment(t, rdir, stub.URL, "1, 2, 3",
		fmt.Sprintf("  cache: %s\n  cache_mode: replay\n", filepath.Join(collected, jetstream.MergedCache)))
	rout := filepath.Join(tmp, "replayed")
	if o, err := run(t, "sweep", "run", replay, "--out", rout); err != nil {
		t.Fatalf("replay: %v\n%s", err, o)
	}
	sameSummaries(t, rout, whole, files)
}

// TestDistDeadLetter: a case that kills every worker that takes it is
// dead-lettered after MaxDeliver deliveries; serve records it in
// dead_letter.jsonl and exits non-zero naming it.
func TestDistDeadLetter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills worker processes")
	}
	bin := coordbenchBinary(t)
	stub := newSlowStub(t, 50*time.Millisecond)
	tmp := t.TempDir()
	file := llmExperiment(t, tmp, stub.URL, "1", "")
	emb := startNATS(t)
	ctx := context.Background()
	out := filepath.Join(tmp, "dist")
	events := startEvents(t, emb.URL(), file)
	serve := served(t, ctx, serveConfig{file: file, out: out, natsURL: emb.URL(), ackWait: time.Second, maxDeliver: 2})
	waitMarker(t, out)
	var killed string
	for i := range 2 {
		killed = startAndKill(t, bin, emb.URL(), out, stub, events, fmt.Sprintf("victim%d", i))
	}
	// A live worker pulls meanwhile: it must not get the case again.
	ws := workers(ctx, 1, workerConfig{natsURL: emb.URL(), out: out, slots: 1, name: "bystander", scratch: t.TempDir(), experimentDir: "."}, nil)
	err := wait(t, serve, "serve")
	if err == nil || !strings.Contains(err.Error(), "dead-lettered "+killed+" after 2 deliveries") {
		t.Fatalf("serve: %v; want %s dead-lettered", err, killed)
	}
	if err := wait(t, ws, "worker"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(mustRead(t, filepath.Join(out, jetstream.DeadLetterFile)))), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], killed) {
		t.Errorf("dead_letter.jsonl: %q", lines)
	}
	if st, _ := jetstream.ReadStatus(out); st == nil || st.DeadLetter != 1 || st.Done != 0 {
		t.Errorf("status: %+v", st)
	}
}

// TestDistTwoModelsLikeOneRun: an experiment with a models list (two
// priced entries at one endpoint, each with its own global limit) served
// to two workers gives the summaries and the cost files of a
// single-machine sweep run, and every model call asked the coordinator
// for a permit under its entry's key.
func TestDistTwoModelsLikeOneRun(t *testing.T) {
	stub := newSlowStub(t, 0)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "two.yaml")
	body := fmt.Sprintf(`benchmark: des
des:
  instances: ["gen:A1C6J1"]
  paradigms: [centralized]
  controllers: [llm]
  seeds: [1, 2]
models:
  - name: small
    model: stub-small
    base_url: %[1]s/v1
    limits: {concurrency: 1}
    price: {input: 0.15, output: 0.60}
  - name: large
    model: stub-large
    base_url: %[1]s/v1
    limits: {concurrency: 2, rpm: 6000}
    price: {input: 2.5, output: 10}
`, stub.URL)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := sweep.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	limits, err := jetstream.ExperimentLimits(e)
	if err != nil || len(limits) != 2 || limits[0].Endpoint == limits[1].Endpoint || limits[0].Concurrency != 1 || limits[1].RPM != 6000 {
		t.Fatalf("limits %+v, %v: want one per entry, keyed apart", limits, err)
	}
	whole := filepath.Join(tmp, "whole")
	if out, err := run(t, "sweep", "run", file, "--out", whole); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	calls, callsPer := stub.n.Load(), stub.perModel()
	emb := startNATS(t)
	grants := watchPermits(t, emb.URL())
	ctx := context.Background()
	out := filepath.Join(tmp, "dist")
	serve := served(t, ctx, serveConfig{file: file, out: out, natsURL: emb.URL()})
	waitMarker(t, out)
	ws := workers(ctx, 2, workerConfig{natsURL: emb.URL(), out: out, slots: 2, name: "w", scratch: t.TempDir(), experimentDir: "."}, nil)
	if err := wait(t, serve, "serve"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := wait(t, ws, "worker"); err != nil {
			t.Errorf("worker: %v", err)
		}
	}
	sameSummaries(t, out, whole, append(slices.Clone(experiments[0].files), "cost.csv", "cost_summary.csv"))
	if served := stub.n.Load() - calls; served != calls {
		t.Errorf("the served sweep made %d model calls, the single-machine run %d", served, calls)
	}
	// Each model call of the served sweep was granted a permit under its
	// own entry's key: as many grants per key as calls to its model, and
	// none under any other key. (Both entries make as many calls, so
	// this cannot tell the two keys swapped from right; it does tell one
	// key for both, or calls made without a permit.)
	got := grants()
	servedPer := stub.perModel()
	keyOf := map[string]string{"stub-small": limits[0].Endpoint, "stub-large": limits[1].Endpoint}
	want := map[string]int64{}
	for model, key := range keyOf {
		n := servedPer[model] - callsPer[model]
		if n == 0 {
			t.Errorf("the served sweep made no call to %s", model)
		}
		want[key] = n
	}
	if !maps.Equal(got, want) {
		t.Errorf("permits granted per key %v, want one per model call under its entry's key %v", got, want)
	}
}

// watchPermits listens, on the NATS server at url, to the permit requests
// of any experiment and to the replies to them; the function it returns
// is the permits granted so far per key (the endpoint asked for). It
// reads package jetstream's protocol (subjects cb.permit.<id>.acquire, a JSON
// request {"endpoint"}, a reply with a "lease" when granted).
func watchPermits(t *testing.T, url string) func() map[string]int64 {
	t.Helper()
	var dropped atomic.Bool // a slow consumer: messages were lost
	nc, err := nats.Connect(url, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) { dropped.Store(true) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	// One channel for requests and replies keeps their order: a request
	// reaches this connection before the reply to it.
	ch := make(chan *nats.Msg, 1<<16)
	for _, subj := range []string{"cb.permit.*.acquire", "_INBOX.>", jetstream.WorkerInboxPrefix + ".>", "test.permits.sync"} {
		if _, err := nc.ChanSubscribe(subj, ch); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	asked := map[string]string{} // reply inbox → key
	granted := map[string]int64{}
	synced := make(chan struct{}, 1)
	go func() {
		for m := range ch {
			switch {
			case m.Subject == "test.permits.sync":
				synced <- struct{}{}
			case strings.HasPrefix(m.Subject, "cb.permit."):
				var req struct {
					Endpoint string `json:"endpoint"`
				}
				if json.Unmarshal(m.Data, &req) == nil && m.Reply != "" {
					mu.Lock()
					asked[m.Reply] = req.Endpoint
					mu.Unlock()
				}
			default:
				mu.Lock()
				key, ok := asked[m.Subject]
				mu.Unlock()
				var rep struct {
					Lease string `json:"lease"`
				}
				if ok && json.Unmarshal(m.Data, &rep) == nil && rep.Lease != "" {
					mu.Lock()
					granted[key]++
					delete(asked, m.Subject)
					mu.Unlock()
				}
			}
		}
	}()
	return func() map[string]int64 {
		// Every message sent before this one has been read once it
		// comes back.
		if err := nc.Publish("test.permits.sync", nil); err != nil {
			t.Fatal(err)
		}
		select {
		case <-synced:
		case <-time.After(time.Minute):
			t.Fatal("the permit watch did not catch up")
		}
		if dropped.Load() {
			t.Fatal("the permit watch lost messages")
		}
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(granted)
	}
}
