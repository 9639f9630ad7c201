package envserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
)

// BenchmarkSteps measures decision steps per second through the server on
// A3C9-1 (centralized, rule policy): one client doing GET decision + POST
// actions, 16 such clients at once, and one client stepping 1 or 16
// episodes per POST /v1/batch/step (one round trip per step of all).
//
//	go test -run '^$' -bench Steps -benchtime 3000x ./des/envserver/
func BenchmarkSteps(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			_, hs := newServer(b, Config{})
			var left atomic.Int64
			left.Store(int64(b.N))
			b.ResetTimer()
			var wg sync.WaitGroup
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := &client{t: b, base: hs.URL}
					for left.Load() > 0 {
						id := c.create("centralized", 1)
						for d := c.next(id); d != nil; d = c.next(id) {
							acts, _ := policy.Rule{}.Act(context.Background(), d)
							c.post(id, d.Step, acts)
							if left.Add(-1) <= 0 {
								break
							}
						}
						c.do("DELETE", "/v1/episodes/"+id, nil)
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) { benchBatch(b, n) })
	}
}

// benchBatch steps n episodes per POST /v1/batch/step.
func benchBatch(b *testing.B, n int) {
	_, hs := newServer(b, Config{})
	c := &client{t: b, base: hs.URL}
	b.ResetTimer()
	steps := 0
	for steps < b.N {
		seed := uint64(1)
		creates := make([]CreateRequest, n)
		for i := range creates {
			creates[i] = CreateRequest{Instance: testInstance, Paradigm: "centralized", Seed: &seed}
		}
		ids := make([]string, n)
		live := map[string]*coord.Decision{}
		for i, r := range c.batch("create", BatchCreateRequest{Episodes: creates}) {
			ids[i] = r.ID
			live[r.ID] = decode(b, r.Decision)
		}
		for len(live) > 0 && steps < b.N {
			items := make([]BatchStepItem, 0, len(live))
			for id, d := range live {
				acts, _ := policy.Rule{}.Act(context.Background(), d)
				step := d.Step
				it := BatchStepItem{ID: id, ActionsRequest: ActionsRequest{Step: &step, Actions: map[string]json.RawMessage{}}}
				for a, v := range acts {
					it.Actions[a] = json.RawMessage(fmt.Sprint(v))
				}
				items = append(items, it)
			}
			steps += len(items)
			for _, r := range c.batch("step", BatchStepRequest{Items: items}) {
				if r.Done {
					delete(live, r.ID)
				} else {
					live[r.ID] = decode(b, r.Decision)
				}
			}
		}
		c.batch("delete", BatchDeleteRequest{IDs: ids})
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}
