package dist

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Permits over a real embedded server: at most Concurrency are held at
// once across clients on different connections, and every one comes back.
func TestPermitsConcurrency(t *testing.T) {
	emb, err := StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	id := "0123456789abcdef0123456789abcdef"
	snc, err := nats.Connect(emb.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer snc.Close()
	ps, err := StartPermits(snc, id, []EndpointLimit{{Endpoint: "http://e/v1", Concurrency: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
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
