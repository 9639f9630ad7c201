package jetstream

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/internal/testenv"
)

// authTestID is the experiment of the auth tests' servers.
const authTestID = "abcdef0123456789abcdef0123456789"

// startAuthServer starts an embedded server with credentials on 127.0.0.2,
// a second loopback address (as a server other machines reach would be
// on another address than 127.0.0.1).
func startAuthServer(t *testing.T) (*Embedded, *Credentials) {
	t.Helper()
	cred, err := NewCredentials("")
	if err != nil {
		t.Fatal(err)
	}
	emb, err := StartServer(ServerConfig{Listen: "127.0.0.2:0", StoreDir: t.TempDir(), Auth: cred, Experiment: authTestID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	return emb, cred
}

// violations records the permission violations the server reports to a
// connection.
type violations struct {
	mu   sync.Mutex
	errs []string
}

func (v *violations) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	v.mu.Lock()
	v.errs = append(v.errs, err.Error())
	v.mu.Unlock()
}

func (v *violations) about(subject string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.errs {
		if strings.Contains(e, "Permissions Violation") && strings.Contains(e, subject) {
			return true
		}
	}
	return false
}

// startTestServer starts an embedded server on loopback, without
// credentials, for one test.
func startTestServer(t *testing.T) *Embedded {
	t.Helper()
	emb, err := StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	return emb
}

// connect connects to url for the rest of the test.
func connect(t *testing.T, url string, o ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, o...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// A server on another address than the default loopback one (127.0.0.2
// here, as a second address others may reach) without credentials is
// refused; with them, a client without the token, or with a
// wrong one, is refused, and the worker's token and the coordinator's
// password are let in.
func TestServerBeyondLoopbackRequiresCredentials(t *testing.T) {
	for _, listen := range []string{"127.0.0.2:0", "0.0.0.0:0", "[::]:0", "192.0.2.1:4222"} {
		_, err := StartServer(ServerConfig{Listen: listen, StoreDir: t.TempDir()})
		var oe *opterr.Error
		if !errors.As(err, &oe) || oe.Option != "auth" {
			t.Errorf("listen %s without credentials: %v, want an error of option auth", listen, err)
		}
	}
	emb, cred := startAuthServer(t)
	if nc, err := nats.Connect(emb.URL()); err == nil {
		nc.Close()
		t.Error("a client without credentials was let in")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("a client without credentials: %v, want an authorization violation", err)
	}
	if nc, err := nats.Connect(emb.URL(), WorkerConnect(cred.Worker+"x")...); err == nil {
		nc.Close()
		t.Error("a client with a wrong token was let in")
	}
	connect(t, emb.URL(), WorkerConnect(cred.Worker)...)
	connect(t, emb.URL(), cred.ServeConnect())
}

// A worker may not do what only the coordinator does: tell the workers
// to stop, replace the experiment, read the results, or read the replies
// the coordinator gets.
func TestWorkerRoleLimits(t *testing.T) {
	emb, cred := startAuthServer(t)
	n, _ := namesOf(authTestID)
	serve := connect(t, emb.URL(), cred.ServeConnect())
	sjs, err := jetstream.New(serve)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := &Spec{ID: authTestID, Store: StoreObject, AckWait: time.Minute, MaxDeliver: 2}
	if _, err := setup(ctx, sjs, spec); err != nil {
		t.Fatalf("the coordinator sets up the streams: %v", err)
	}
	kv, err := sweepsBucket(ctx, sjs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, n.specKey(), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	ctl, err := serve.SubscribeSync(n.controlSubject())
	if err != nil {
		t.Fatal(err)
	}
	var v violations
	worker := connect(t, emb.URL(), append(WorkerConnect(cred.Worker), nats.ErrorHandler(v.handler))...)
	if err := worker.Publish(n.controlSubject(), encode(control{Kind: "done"})); err != nil {
		t.Fatal(err)
	}
	worker.Flush() // the server refuses the publish before the PONG
	serve.Flush()
	testenv.Wait(t, "the permissions violation of the worker's control message", func() bool { return v.about(n.controlSubject()) })
	if p, _, _ := ctl.Pending(); p != 0 {
		t.Errorf("the worker's control message reached the coordinator's subscription (%d pending)", p)
	}
	wjs, err := jetstream.New(worker)
	if err != nil {
		t.Fatal(err)
	}
	wkv, err := wjs.KeyValue(ctx, Bucket)
	if err != nil {
		t.Fatalf("a worker reads the experiments bucket: %v", err)
	}
	if _, err := wkv.Get(ctx, n.specKey()); err != nil {
		t.Errorf("a worker reads the experiment: %v", err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if _, err := wkv.Put(wctx, n.specKey(), []byte(`{"forged":true}`)); err == nil {
		t.Error("a worker replaced the experiment")
	}
	if _, err := wjs.Consumer(wctx, n.resultStream(), "serve"); err == nil {
		t.Error("a worker read the results consumer")
	}
	if _, err := wjs.CreateOrUpdateStream(wctx, jetstream.StreamConfig{Name: "FORGED", Subjects: []string{"forged.>"}}); err == nil {
		t.Error("a worker created a stream")
	}
	if err := wjs.DeleteStream(wctx, n.caseStream()); err == nil {
		t.Error("a worker deleted the case stream")
	}
	if _, err := worker.SubscribeSync("_INBOX.>"); err == nil {
		worker.Flush()
		testenv.Wait(t, "the permissions violation of the worker's subscription to serve's replies", func() bool { return v.about("_INBOX.>") })
	}
	// What a worker does is allowed: it publishes a result the
	// coordinator reads.
	if _, err := wjs.Publish(ctx, n.resultSubject(), encode(Result{Case: "c-1", Status: StatusDone})); err != nil {
		t.Errorf("a worker publishes a result: %v", err)
	}
}

// A worker cannot release or renew another worker's permit: leases are
// random ids. Worker b holds a lease of its own and sends a release of
// it with guesses at a's; once its own lease is gone, a's is still held.
func TestPermitLeaseNotForgeable(t *testing.T) {
	emb, _, ps := servePermitLimits(t, []EndpointLimit{
		{Endpoint: "http://a/v1", Concurrency: 1}, {Endpoint: "http://b/v1", Concurrency: 1}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := func() *PermitClient {
		pc, err := NewPermitClient(connect(t, emb.URL()), permitsTestID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pc.Close)
		return pc
	}
	if _, err := client().Acquire(ctx, "http://a/v1"); err != nil {
		t.Fatal(err)
	}
	b := client()
	if _, err := b.Acquire(ctx, "http://b/v1"); err != nil {
		t.Fatal(err)
	}
	ps.mu.Lock()
	var own string
	for id, l := range ps.leases {
		if l.ep == ps.limits["http://b/v1"] {
			own = id
		}
	}
	ps.mu.Unlock()
	forged := []string{own}
	for i := range 5000 {
		forged = append(forged, strconv.FormatUint(uint64(i), 36))
	}
	forged = append(forged, "", "*", ">")
	if err := b.nc.Publish(b.n.permitSubject("release"), encode(leaseMsg{Leases: forged[:1000]})); err != nil {
		t.Fatal(err)
	}
	if err := b.nc.Publish(b.n.permitSubject("release"), encode(leaseMsg{Leases: append(forged[1000:], own)})); err != nil {
		t.Fatal(err)
	}
	for {
		if len(ps.limits["http://b/v1"].sem) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("b's own lease was never released")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if got := len(ps.limits["http://a/v1"].sem); got != 1 {
		t.Errorf("a's permit: %d held after b's forged release, want 1", got)
	}
}

// The embedded server bounds the connections open at once: one more is
// refused, and let in once another has closed.
func TestServerConnectionCap(t *testing.T) {
	emb, err := StartServer(ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	first := connect(t, emb.URL())
	connect(t, emb.URL())
	if nc, err := nats.Connect(emb.URL(), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("a third connection was let in")
	}
	first.Close()
	testenv.Wait(t, "a connection once another closed", func() bool {
		nc, err := nats.Connect(emb.URL(), nats.NoReconnect())
		if err == nil {
			nc.Close()
		}
		return err == nil
	})
}
