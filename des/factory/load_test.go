package factory

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestReportedInstancesLoad(t *testing.T) {
	names := BuiltinNames()
	if len(names) == 0 {
		t.Fatal("no embedded instances")
	}
	for _, name := range names {
		in, err := Resolve(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if in.Name != name {
			t.Errorf("file %s.yaml names itself %q", name, in.Name)
		}
		if len(in.Seeds.Test) != 10 || len(in.Seeds.Dev) == 0 {
			t.Errorf("%s: want 10 test seeds and some dev seeds, got %d and %d", name, len(in.Seeds.Test), len(in.Seeds.Dev))
		}
		p := Compile(in)
		if len(p.Jobs(in.Seeds.Test[0])) == 0 {
			t.Errorf("%s: no jobs", name)
		}
	}
}

// mutate applies a textual edit to the tiny instance and parses it.
func mutate(t *testing.T, old, new string) error {
	t.Helper()
	data, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if !strings.Contains(s, old) {
		t.Fatalf("test setup: %q not in tiny.yaml", old)
	}
	_, err = Parse("tiny.yaml", []byte(strings.Replace(s, old, new, 1)))
	return err
}

func TestBadInstances(t *testing.T) {
	cases := []struct {
		name, old, new string
		line           int
		field, msg     string
	}{
		{"unknown key", "wip_cap: 2", "wip_cap: 2\nwip_capp: 3", 11, "wip_capp", `unknown field "wip_capp" (did you mean "wip_cap"?)`},
		{"unknown nested key", "  buffer: 1", "  buffer: 1\n  bufer: 2", 21, "cell_defaults.bufer", `unknown field "bufer" (did you mean "buffer"?)`},
		{"unknown key, no near one", "wip_cap: 2", "wip_cap: 2\ncolour: red", 11, "colour", `unknown field "colour" (the fields here are areas, arrivals,`},
		{"unknown key in a flow list", "{op: drill, time: 5}", "{op: drill, tiem: 5}", 30, "products[0].route[1].tiem", `did you mean "time"?`},
		{"wrong type", "wip_cap: 2", "wip_cap: twenty", 10, "wip_cap", `want an integer, got "twenty"`},
		{"wrong type, long value", "wip_cap: 2", "wip_cap: twentyfivethousand", 10, "wip_cap", `want an integer, got "twentyfivethousand"`},
		{"wrong type in a flow mapping", "{id: C2, capabilities", "{id: C2, machines: two, capabilities", 28, "areas[1].cells[0].machines", `want an integer, got "two"`},
		{"wrong kind", "  change: 3", "  change: [3]", 13, "setup.change", "want a number, got a list"},
		{"seed not a number", "test: [1]", "test: [x]", 37, "seeds.test[0]", `want a non-negative integer, got "x"`},
		{"zero buffer in defaults", "  buffer: 1", "  buffer: -1", 20, "cell_defaults.buffer", "at least 1"},
		{"zero buffer in cell", "{id: C1, capabilities", "{id: C1, buffer: -3, capabilities", 25, "areas[0].cells[0].buffer", "at least 1"},
		{"zero machines", "{id: C2, capabilities", "{id: C2, machines: -2, capabilities", 28, "areas[1].cells[0].machines", "at least one machine"},
		{"negative time", "{op: drill, time: 5}", "{op: drill, time: -5}", 30, "products[0].route[1].time", "positive"},
		{"no capable cell", "{op: drill, time: 5}", "{op: weld, time: 5}", 30, "products[0].route[1].op", `no cell can do operation "weld"`},
		{"unknown product in orders", "- {product: P, arrival: 1", "- {product: Q, arrival: 1", 34, "arrivals.orders[1].product", `unknown product "Q"`},
		{"unknown area in matrix", "  dock: 2", "  dock: 2\n  dock_matrix: {A9: 3}", 18, "transport.dock_matrix.A9", `unknown area "A9"`},
		{"unknown family in setup", "  change: 3", "  change: 3\n  matrix: {G: {F: 1}}", 14, "setup.matrix.G", `unknown product family "G"`},
		{"negative horizon", "horizon: 1000", "horizon: -1", 5, "horizon", "positive"},
		{"due before arrival", "arrival: 1, due: 20", "arrival: 1, due: 0.5", 34, "arrivals.orders[1].due", "before arrival"},
		{"bad format", "format: coordbench-instance/v1", "format: v0", 2, "format", "want"},
		{"duplicate cell", "{id: C2, capabilities", "{id: C1, capabilities", 28, "areas[1].cells[0].id", "duplicate cell"},
		{"seed in test and dev", "test: [1]", "test: [1]\n  dev: [1]", 38, "seeds.dev", "both test and dev"},
		{"bad dispatch", "  buffer: 1", "  buffer: 1\n  dispatch: lifo", 21, "cell_defaults.dispatch", "unknown dispatch rule"},
		{"malformed yaml", "wip_cap: 2", "wip_cap: [2", 0, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := mutate(t, tc.old, tc.new)
			if err == nil {
				t.Fatal("accepted a bad instance")
			}
			var ie *InstanceError
			if !errors.As(err, &ie) {
				t.Fatalf("want *InstanceError, got %T: %v", err, err)
			}
			if ie.File != "tiny.yaml" {
				t.Errorf("file = %q", ie.File)
			}
			if tc.line > 0 && ie.Line != tc.line {
				t.Errorf("line = %d, want %d (%v)", ie.Line, tc.line, err)
			}
			if ie.Field != tc.field {
				t.Errorf("field = %q, want %q (%v)", ie.Field, tc.field, err)
			}
			if !strings.Contains(ie.Msg, tc.msg) {
				t.Errorf("message %q lacks %q", ie.Msg, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "tiny.yaml:") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestDefaultsResolved(t *testing.T) {
	in, err := LoadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := in.Areas[1].Cells[0]
	if c.Machines != 1 || c.Buffer != 1 || c.Dispatch != "fifo" || c.PowerKW == nil || c.PowerKW.Busy != 2 {
		t.Errorf("cell defaults not filled: %+v", c)
	}
	if in.Limits.NoProgressSteps != DefaultNoProgressSteps || in.Limits.MaxDecisions != DefaultMaxDecisions {
		t.Errorf("limits not defaulted: %+v", in.Limits)
	}
	p := Compile(in)
	if got := p.TransportTime(-1, 1); got != 2 {
		t.Errorf("dock → C2 = %v, want 2", got)
	}
	if got := p.TransportTime(0, 1); got != 4 {
		t.Errorf("C1 → C2 = %v, want 4 (inter-area)", got)
	}
	if got, want := p.SetupTime(-1, 0), 2.0; got != want {
		t.Errorf("initial setup = %v, want %v", got, want)
	}
	jobs := p.Jobs(1)
	if len(jobs) != 2 || jobs[0].Due != 30 || jobs[1].Due != 20 {
		t.Errorf("order book jobs = %+v (want due 0+2×15=30 and 20)", jobs)
	}
}

func TestGenerator(t *testing.T) {
	for _, ref := range []string{"gen:A16C64", "gen:A3C3", "gen:A2C5J7"} {
		in, err := Resolve(ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		p := Compile(in)
		spec, _ := ParseGenSpec(ref)
		if len(p.Areas) != spec.Areas || len(p.Cells) != spec.Cells {
			t.Errorf("%s: got %d areas %d cells", ref, len(p.Areas), len(p.Cells))
		}
		if spec.Jobs > 0 && in.Arrivals.Jobs != spec.Jobs {
			t.Errorf("%s: jobs = %d", ref, in.Arrivals.Jobs)
		}
	}
	for _, bad := range []string{"gen:A0C3", "gen:A4C2", "gen:16x64", "gen:A2C2"} {
		if _, err := Resolve(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	data, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("format: coordbench-instance/v1\nname: x\n"))
	f.Add([]byte("{]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Parse("fuzz.yaml", b)
		if err == nil {
			Compile(in) // a valid instance must compile without panicking
		}
	})
}
