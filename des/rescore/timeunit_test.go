package rescore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

// TestViolationsIgnoreTheTimeUnit: the same traces written in minutes
// instead of seconds (every time divided by 60, time_unit_s 60) get the
// same G_vc under the current rules, so every ranking by G_vc stays;
// under des-metrics/1, which counted time units of the instance's clock,
// rankings flip (docs/metrics.md, "G_vc and the unit of time").
func TestViolationsIgnoreTheTimeUnit(t *testing.T) {
	in, err := factory.Resolve("A5C12-2")
	if err != nil {
		t.Fatal(err)
	}
	in.Power.CapKW /= 2 // more time over the cap
	p := factory.Compile(in)
	type pair struct{ cur, v1 [2]int } // [seconds, minutes]
	var runs []pair
	for _, m := range coord.Builtins() {
		for _, name := range policy.Names() {
			seed := in.Seeds.Test[0]
			c, err := policy.New(name, seed)
			if err != nil {
				t.Fatal(err)
			}
			var tr bytes.Buffer
			if r := harness.Run(context.Background(), harness.Episode{Plant: p, Seed: seed, Mode: m, Controller: c, Trace: &tr}); r.Err != nil {
				t.Fatal(r.Err)
			}
			mins := inMinutes(t, tr.Bytes())
			var x pair
			for i, trace := range [][]byte{tr.Bytes(), mins} {
				x.cur[i] = violations(t, trace, harness.CurrentScorer())
				x.v1[i] = violations(t, trace, harness.V1Scorer())
			}
			if x.cur[0] != x.cur[1] {
				t.Errorf("%s %s: G_vc %d in seconds, %d in minutes", m.ID, name, x.cur[0], x.cur[1])
			}
			runs = append(runs, x)
		}
	}
	flips, pairs := 0, 0
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			pairs++
			a, b := runs[i].v1, runs[j].v1
			if (a[0] < b[0]) != (a[1] < b[1]) || (a[0] == b[0]) != (a[1] == b[1]) {
				flips++
			}
		}
	}
	t.Logf("%d runs: des-metrics/1 flips %d of %d orderings by G_vc in minutes, the current rules none", len(runs), flips, pairs)
	if flips == 0 {
		t.Error("no ordering flips under des-metrics/1: the test does not tell the rules apart")
	}
}

// inMinutes rewrites a trace in minutes: every time divided by 60.
func inMinutes(t *testing.T, trace []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"t", "due", "dur", "horizon"} {
			if v, ok := l[k].(float64); ok {
				l[k] = v / 60
			}
		}
		if _, ok := l["time_unit_s"]; ok {
			l["time_unit_s"] = 60.0
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	return out.Bytes()
}

// violations is the G_vc s gives a trace.
func violations(t *testing.T, trace []byte, s harness.Scorer) int {
	t.Helper()
	var tally harness.Tally
	r := newTraceReader(&tally)
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if err := r.line(sc.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.end(); err != nil {
		t.Fatal(err)
	}
	var m harness.Metrics
	s.Score(&tally, harness.Coordination{}, &m)
	return m.GVc
}
