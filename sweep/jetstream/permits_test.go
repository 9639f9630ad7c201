package jetstream

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
	return servePermitLimits(t, []EndpointLimit{{Endpoint: "http://e/v1", Concurrency: concurrency}})
}

// servePermitLimits is servePermits of the given limits.
func servePermitLimits(t *testing.T, limits []EndpointLimit) (*Embedded, *nats.Conn, *PermitServer) {
	t.Helper()
	emb := startTestServer(t)
	nc := connect(t, emb.URL())
	ps, err := StartPermits(nc, permitsTestID, limits)
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

// A permit granted to a requester that has gone away (its request timed
// out, or it died, before the grant reached it) comes back soon, not
// after a whole leaseTTL: nobody renews it. A permit whose holder got it
// lives on as long as it is renewed.
func TestPermitUnclaimedGrantComesBack(t *testing.T) {
	_, nc, ps := servePermits(t, 1)
	ep := ps.limits["http://e/v1"]
	// The requester is gone: nobody listens on its reply inbox.
	if err := nc.PublishRequest(ps.n.permitSubject("acquire"), nats.NewInbox(), encode(permitRequest{Endpoint: "http://e/v1", Confirms: true})); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ps.Granted() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the permit was not granted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	soon := firstLeaseTTL + time.Second // well before leaseTTL
	ps.reapAt(time.Now().Add(soon))
	if n := len(ep.sem); n != 0 {
		t.Fatalf("%d permits still held %v after a grant nobody received (want 0: it comes back well before leaseTTL %v)", n, soon, leaseTTL)
	}

	// A holder that received its grant confirms it at once, and keeps it
	// for leaseTTL from then (renewing it every leaseTTL/3).
	pc, err := NewPermitClient(nc, permitsTestID)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	release, err := pc.Acquire(context.Background(), "http://e/v1")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	granted := time.Now()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		ps.mu.Lock()
		confirmed := false
		for _, ls := range ps.leases {
			confirmed = ls.expires.After(granted.Add(leaseTTL / 2))
		}
		ps.mu.Unlock()
		if confirmed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder's lease was not confirmed to leaseTTL")
		}
	}
	ps.reapAt(granted.Add(leaseTTL / 3))
	if n := len(ep.sem); n != 1 {
		t.Fatalf("%d permits held after leaseTTL/3 (want 1: its holder has it)", n)
	}
	ps.reapAt(time.Now().Add(leaseTTL + time.Second))
	if n := len(ep.sem); n != 0 {
		t.Fatalf("%d permits held after leaseTTL without renewal (want 0)", n)
	}

	// A worker of an earlier version, which does not confirm its grants,
	// gets a lease of leaseTTL at once (it renews only every leaseTTL/3).
	if err := nc.PublishRequest(ps.n.permitSubject("acquire"), nats.NewInbox(), encode(permitRequest{Endpoint: "http://e/v1"})); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ps.Granted() < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the permit was not granted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	old := time.Now()
	ps.reapAt(old.Add(leaseTTL / 3))
	if n := len(ep.sem); n != 1 {
		t.Fatalf("%d permits held by a worker that does not confirm, leaseTTL/3 after the grant (want 1)", n)
	}
	ps.reapAt(old.Add(leaseTTL + time.Second))
	if n := len(ep.sem); n != 0 {
		t.Fatalf("%d permits held after leaseTTL without renewal (want 0)", n)
	}
}
