package dist

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

const permitsTestID = "0123456789abcdef0123456789abcdef"

// servePermits starts an embedded NATS server and a permit server of
// concurrency permits for http://e/v1 on it; it returns the server and
// the permit server's connection. Both close with the test.
func servePermits(t *testing.T, concurrency int) (*Embedded, *nats.Conn, *PermitServer) {
	t.Helper()
	emb, err := StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	nc, err := nats.Connect(emb.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ps, err := StartPermits(nc, permitsTestID, []EndpointLimit{{Endpoint: "http://e/v1", Concurrency: concurrency}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ps.Close)
	return emb, nc, ps
}

// Permits over a real embedded server: at most Concurrency are held at
// once across clients on different connections, and every one comes back.
func TestPermitsConcurrency(t *testing.T) {
	emb, _, ps := servePermits(t, 2)
	id := permitsTestID
	var held, most atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		nc, err := nats.Connect(emb.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		pc, err := NewPermitClient(nc, id)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		for range 4 {
			wg.Go(func() {
				release, err := pc.Acquire(context.Background(), "http://e/v1")
				if err != nil {
					t.Error(err)
					return
				}
				n := held.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
				held.Add(-1)
				release()
			})
		}
	}
	wg.Wait()
	if most.Load() > 2 || ps.Granted() != 12 {
		t.Errorf("at most %d held at once (want ≤ 2), %d granted (want 12)", most.Load(), ps.Granted())
	}
	// An endpoint without a global limit needs no permit.
	nc, _ := nats.Connect(emb.URL())
	defer nc.Close()
	pc, _ := NewPermitClient(nc, id)
	defer pc.Close()
	if release, err := pc.Acquire(context.Background(), "http://other/v1"); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
}

// Requests beyond the bound on waiting ones are told at once to pause and
// come back (Busy), instead of each getting a goroutine.
func TestPermitWaitersBounded(t *testing.T) {
	_, nc, ps := servePermits(t, 1)
	id := permitsTestID
	ps.mu.Lock()
	ps.maxWait = 3
	ps.mu.Unlock()
	pc, err := NewPermitClient(nc, id)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	release, err := pc.Acquire(context.Background(), "http://e/v1") // the only permit
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	inbox := nats.NewInbox()
	replies, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	n := ps.n
	for range 10 {
		nc.PublishRequest(n.permitSubject("acquire"), inbox, encode(permitRequest{Endpoint: "http://e/v1"}))
	}
	busy := 0
	for range 7 { // the 3 waiting ones answer only after permitWait
		m, err := replies.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("after %d busy replies: %v", busy, err)
		}
		var rep permitReply
		if decode(m.Data, &rep) == nil && rep.Retry && rep.Busy {
			busy++
		}
	}
	ps.mu.Lock()
	waiting := ps.wait
	ps.mu.Unlock()
	if busy != 7 || waiting != 3 {
		t.Errorf("%d busy replies (want 7), %d waiting (want 3)", busy, waiting)
	}
}
