package envcore_test

import (
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envcore"
	"github.com/coordbench/coordbench/des/factory"
)

// TestShapes: the vector lengths and action counts docs/python-env.md
// gives for A3C9-1 (plant 115, an area 75, a cell 60, the mode selector of
// four modes 85), and an unknown area is an error.
func TestShapes(t *testing.T) {
	in, err := factory.Resolve("A3C9-1")
	if err != nil {
		t.Fatal(err)
	}
	p := factory.Compile(in)
	layout := envcore.Layout(p)
	offer := []string{"centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid"}
	for _, tc := range []struct {
		agent           string
		length, actions int
	}{
		{"plant", 115, 10},
		{"area:" + layout[0].Area, 75, 4},
		{"cell:" + layout[0].Cells[0], 60, 4},
		{coord.AgentModeSelector, 85, 4},
	} {
		sh, err := envcore.NewShape(tc.agent, layout, offer)
		if err != nil {
			t.Fatal(err)
		}
		if sh.Length != tc.length || sh.Actions != tc.actions {
			t.Errorf("%s: length %d, actions %d; want %d, %d", tc.agent, sh.Length, sh.Actions, tc.length, tc.actions)
		}
	}
	if _, err := envcore.NewShape("area:nowhere", layout, nil); err == nil {
		t.Error("an unknown area gave a shape")
	}
}

// TestEncode: an inactive agent's vector is zeros; an active one's starts
// with its kind's one-hot, 1 (active), the time, the headroom and the
// legal count, and each option's block says whether it is legal.
func TestEncode(t *testing.T) {
	layout := []envcore.AreaLayout{{Area: "A1", Cells: []string{"C1", "C2"}}}
	sh, err := envcore.NewShape("plant", layout, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float64, sh.Length)
	for i := range dst {
		dst[i] = 7
	}
	sh.Encode(dst, nil, 3)
	for i, x := range dst {
		if x != 0 {
			t.Fatalf("inactive: entry %d is %g", i, x)
		}
	}
	v := &coord.View{Kind: coord.KindRelease, LegalActions: []int{0, 1, 1},
		Observation: coord.Observation{HeadroomKW: 4.5, Plant: &coord.PlantObservation{PowerKW: 2, Areas: []coord.AreaSummary{{Area: "A1", Busy: 3}}}},
		Options:     []coord.Option{{Action: coord.ActRelease, Job: &coord.JobOption{Work: 8, Due: 13}}, {Action: coord.ActDefer}}}
	sh.Encode(dst, v, 10)
	kinds := len(envcore.Kinds)
	if dst[0] != 1 || dst[kinds] != 1 || dst[kinds+1] != 10 || dst[kinds+2] != 4.5 || dst[kinds+3] != 2 {
		t.Fatalf("common block %v", dst[:kinds+4])
	}
	plant := kinds + 4 + 6
	if dst[plant] != 2 || dst[plant+8] != 3 {
		t.Fatalf("plant block %v", dst[plant:plant+14])
	}
	opt := plant + 8 + 6
	want := []float64{1, 1, 8, 3, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0}
	for i, w := range want {
		if dst[opt+i] != w {
			t.Fatalf("options %v, want %v", dst[opt:opt+len(want)], want)
		}
	}
}
