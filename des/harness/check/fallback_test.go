package check

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

// declining declines every plant-level fallback and answers the rest as
// the rule controller does. It embeds the Controller interface, not
// policy.Rule itself: Rule's ChooseView (coord.ViewChooser) would be
// promoted, and Run would answer with it rather than this Act.
type declining struct{ coord.Controller }

func (c declining) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	out, err := c.Controller.Act(ctx, d)
	for id, v := range d.ActiveAgents {
		if v.Kind == coord.KindPlantFallback {
			out[id] = len(v.Options) - 1 // decline, always last
		}
	}
	return out, err
}

// The re-checker holds a run with harness placements to the attribution
// rule: a plant_fallback always commits a cell, and one that committed its
// decline (no cell) is reported.
func TestPlantFallbackAttribution(t *testing.T) {
	in, err := factory.Resolve("A3C9-1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = harness.RunToDir(context.Background(), harness.Episode{Plant: factory.Compile(in), Seed: in.Seeds.Test[0],
		Mode: coord.HolonicHybrid(), Controller: declining{policy.Rule{}}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := Dir(dir); err != nil || !rep.OK() {
		t.Fatalf("the run does not check: %v %+v", err, rep)
	}
	path := filepath.Join(dir, harness.FileDecisions)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	mutated := false
	for line := range bytes.Lines(b) {
		var a map[string]any
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatal(err)
		}
		if !mutated && a["kind"] == coord.KindPlantFallback && a["source"] == string(coord.SourceFallback) {
			a["action"] = a["requested"] // commit the decline itself: no cell
			line, _ = json.Marshal(a)
			line = append(line, '\n')
			mutated = true
		}
		out.Write(line)
	}
	if !mutated {
		t.Fatal("no harness placement in the run")
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Check == ckDecisions && strings.Contains(p.Msg, "plant_fallback committed \"decline\"") {
			return
		}
	}
	t.Fatalf("the decline committed as a placement was not reported: %+v", rep.Problems)
}
