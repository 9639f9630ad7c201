package proto

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// deliveries plays rounds 1 and 2 of protocol p with n agents under
// options o: in round 1 every agent but the last sends two messages
// (P2P: to the last agent) or broadcasts two; in round 2 the last agent
// receives. It returns what it got, as "sender.k" texts, in order.
func deliveries(t *testing.T, p Protocol, n int, o Options) []string {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "run.db"), p, n, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	last := n - 1
	begin(t, s, 1)
	for a := last - 1; a >= 0; a-- { // arrival order must not matter
		for k := range 2 {
			text := fmt.Sprintf("%d.%d", a, k)
			if p == P2P {
				send(t, s, a, last, text)
			} else {
				call(t, s, a, ToolBroadcast, fmt.Sprintf(`{"content":%q}`, text))
			}
		}
	}
	end(t, s)
	begin(t, s, 2)
	var got []string
	for _, m := range receive(t, s, last) {
		if m.Round != 1 || m.Content[:len(fmt.Sprint(m.From))] != fmt.Sprint(m.From) {
			t.Fatalf("message %+v", m)
		}
		got = append(got, m.Content)
	}
	end(t, s)
	return got
}

func TestMessageOrder(t *testing.T) {
	const n = 12 // senders 0..10: "10" sorts between "1" and "2" as text
	var fixed []string
	for a := range n - 1 {
		fixed = append(fixed, fmt.Sprintf("%d.0", a), fmt.Sprintf("%d.1", a))
	}
	for _, p := range []Protocol{P2P, Broadcast} {
		// The store's own default and OrderFixed: sender id, send order.
		for _, o := range []Options{{}, {MessageOrder: OrderFixed, OrderSeed: 7}} {
			if got := deliveries(t, p, n, o); !slices.Equal(got, fixed) {
				t.Errorf("%s %+v: %v, want %v", p, o, got, fixed)
			}
		}
		// OrderRandom: the same seed delivers alike; the order is a
		// permutation of the round's messages; seeds draw apart.
		a := deliveries(t, p, n, Options{MessageOrder: OrderRandom, OrderSeed: 1})
		if b := deliveries(t, p, n, Options{MessageOrder: OrderRandom, OrderSeed: 1}); !slices.Equal(a, b) {
			t.Errorf("%s: one seed, two orders:\n%v\n%v", p, a, b)
		}
		if sorted := slices.Sorted(slices.Values(a)); !slices.Equal(sorted, slices.Sorted(slices.Values(fixed))) {
			t.Errorf("%s: %v is not a permutation of the round's messages", p, a)
		}
		if slices.Equal(a, fixed) {
			t.Errorf("%s: the random order is the fixed one", p)
		}
		if c := deliveries(t, p, n, Options{MessageOrder: OrderRandom, OrderSeed: 2}); slices.Equal(a, c) {
			t.Errorf("%s: seeds 1 and 2 give the same order %v", p, a)
		}
		if p != Broadcast {
			continue
		}
		// Broadcasts: by sender id as text ("10_" < "1_" < "2_", as the
		// published file names sort), one sender's in a random order.
		var senders []string
		for _, m := range a {
			if s := m[:len(m)-2]; len(senders) == 0 || senders[len(senders)-1] != s {
				senders = append(senders, s)
			}
		}
		want := []string{"10", "1", "0", "2", "3", "4", "5", "6", "7", "8", "9"}
		slices.SortFunc(want, func(x, y string) int {
			if x+"_" < y+"_" {
				return -1
			}
			return 1
		})
		if !slices.Equal(senders, want) {
			t.Errorf("broadcast senders in order %v, want %v", senders, want)
		}
	}
	if _, err := Open(":memory:", P2P, 2, Options{MessageOrder: "shuffled"}); err == nil {
		t.Error("an unknown order was accepted")
	}
	if o, err := ParseMessageOrder(""); err != nil || o != OrderRandom {
		t.Errorf(`ParseMessageOrder("") = %q, %v; want the published default`, o, err)
	}
}
