package rescore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/harness/check"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/scorediff"
	"github.com/coordbench/coordbench/internal/scorediff/difftest"
)

// The pinned run: a small stored run (testdata/pinned-run, the overcap
// plant of des/factory's tests with four orders: over the cap, tardy,
// several decisions and messages) and the SHA-256 of the values the
// current scorer gives it (testdata/pin.json; scoredValues). Stored
// artifacts make the pin independent of the simulator, and hashing only
// what the rules define makes it independent of accounting fields added
// to metrics.json: only the scoring rules move it.
//
// A second run pins what only a truncated episode shows
// (testdata/pinned-stall, testdata/pin-stall.json): the same plant timed
// in minutes (time_unit_s 60) and stopped by its decision limit with jobs
// unfinished, so that its G_mk, G_td and G_ut are owed to the horizon and
// its G_vc counts seconds, not minutes, over the cap.
var pins = []struct{ run, file string }{
	{"testdata/pinned-run", "testdata/pin.json"},
	{"testdata/pinned-stall", "testdata/pin-stall.json"},
}

// TestScorerPin fails when the metrics the scorer gives the pinned run
// change while harness.ScorerVersion stays: a change to a metric's
// definition must bump the version (docs/metrics.md, "Scorer version").
func TestScorerPin(t *testing.T) {
	for _, p := range pins {
		r, err := scoreRun(context.Background(), p.run, "pinned", harness.CurrentScorer())
		if err != nil {
			t.Fatal(err)
		}
		difftest.CheckPin(t, p.file, harness.ScorerVersion, scoredValues(t, r.files[0].New), "harness.ScorerVersion",
			`docs/metrics.md, "Scorer version"`, r.changes)
	}
}

// scoredValues hashes the values of metrics.json that Scorer.Score
// defines, one "key=value" line each in document order.
func scoredValues(t *testing.T, metrics []byte) string {
	t.Helper()
	all, err := scorediff.JSONChanges("", "", []byte("{}"), metrics) // every value, as a change from nothing
	if err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for _, c := range all {
		k := c.Metric
		if k == "status" || strings.HasPrefix(k, "G_") || strings.HasPrefix(k, "violations.") ||
			slices.Contains([]string{"secondary.carbon_kg", "secondary.breakdowns", "secondary.reroutes", "secondary.jobs", "secondary.decisions"}, k) ||
			strings.HasPrefix(k, "secondary.decisions_by_source.") || strings.HasPrefix(k, "secondary.messages_by_type.") {
			fmt.Fprintf(&lines, "%s=%s\n", k, c.New)
		}
	}
	if !strings.Contains(lines.String(), "G_do=") {
		t.Fatalf("no metric found in %s", metrics)
	}
	return sha256Hex([]byte(lines.String()))
}

// TestWritePinnedRun writes the pinned runs anew when
// COORDBENCH_WRITE_PINNED_RUN=1 (after a change of the artifacts' format,
// not of the scoring rules).
func TestWritePinnedRun(t *testing.T) {
	if os.Getenv("COORDBENCH_WRITE_PINNED_RUN") != "1" {
		t.Skip("set COORDBENCH_WRITE_PINNED_RUN=1 to write the pinned runs")
	}
	in, err := factory.LoadFile(filepath.Join("..", "factory", "testdata", "overcap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in.Arrivals.Orders = []factory.Order{{Product: "P", Arrival: 0}, {Product: "P", Arrival: 3}, {Product: "P", Arrival: 5}, {Product: "P", Arrival: 40}}
	stall := *in
	stall.TimeUnitS = 60
	stall.Limits.MaxDecisions = 3
	for i, in := range []*factory.Instance{in, &stall} {
		run, file := pins[i].run, pins[i].file
		os.RemoveAll(run)
		if _, err := harness.RunToDir(context.Background(), harness.Episode{Plant: factory.Compile(in), Seed: 1, Mode: coord.Builtins()[0], Controller: policy.Rule{}}, run); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{harness.FileTiming, harness.FileEpisodeTiming} {
			os.Remove(filepath.Join(run, f))
		}
		r, err := scoreRun(context.Background(), run, "pinned", harness.CurrentScorer())
		if err != nil {
			t.Fatal(err)
		}
		difftest.WritePin(t, file, difftest.Pin{Scorer: harness.ScorerVersion, Scored: scoredValues(t, r.files[0].New)})
	}
}

// TestPinnedRunsValidate: des validate, which recomputes every metric
// with code of its own, agrees with the scorer on the pinned runs, the
// truncated one (owed to the horizon, G_vc in seconds of a plant timed in
// minutes) among them.
func TestPinnedRunsValidate(t *testing.T) {
	for _, p := range pins {
		rep, err := check.Dir(p.run)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 0 {
			t.Errorf("%s: %v", p.run, rep.Problems)
		}
	}
}
