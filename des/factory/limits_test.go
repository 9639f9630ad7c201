package factory

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/inputfile"
)

// parseTiny applies a textual edit to the tiny instance and parses it
// within lim.
func parseTiny(t *testing.T, lim SizeLimits, old, new string) (*Instance, error) {
	t.Helper()
	data, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("test setup: %q not in tiny.yaml", old)
	}
	return lim.Parse("tiny.yaml", []byte(strings.Replace(string(data), old, new, 1)))
}

const stream = "arrivals:\n  jobs: 3\n  mean_interarrival: 5\n"
const orders = "arrivals:\n  orders:\n    - {product: P, arrival: 0}\n    - {product: P, arrival: 1, due: 20}\n"

// TestPlantSizeLimits: the plants of issue 14 that exhausted memory are
// refused, naming the limit, the field and how to raise it; a raised
// limit admits them.
func TestPlantSizeLimits(t *testing.T) {
	def := DefaultSizeLimits()
	def.Raise = "--plant-limit %s=%d"
	for _, tc := range []struct {
		name, old, new string
		field, want    string
	}{
		{"jobs", orders, strings.Replace(stream, "3", "10000000", 1), "arrivals.jobs",
			"10000000 jobs: over the limit of 100000 (raise it with --plant-limit jobs=10000000"},
		{"machines", "  machines: 1", "  machines: 1000000000", "areas",
			"2000000000 machines: over the limit of 8192"},
		{"route", "{op: cut, time: 10}, ", strings.Repeat("{op: cut, time: 10}, ", 70), "products[0].route", "71 operations in one route: over the limit of 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTiny(t, def, tc.old, tc.new)
			var ie *InstanceError
			if !errors.As(err, &ie) || ie.Field != tc.field || !strings.Contains(ie.Msg, tc.want) {
				t.Fatalf("got %v, want field %q and %q", err, tc.field, tc.want)
			}
		})
	}
	raised := def
	raised.Jobs = 10_000_000
	if in, err := parseTiny(t, raised, orders, strings.Replace(stream, "3", "10000000", 1)); err != nil || in.Arrivals.Jobs != 10_000_000 {
		t.Errorf("raised limit: %v", err)
	}

	for ref, want := range map[string]string{
		"gen:A16C64J10000000":         "10000000 jobs: over the limit of 100000 (raise it with --plant-limit jobs=10000000",
		"gen:A100000C100000":          "100000 areas: over the limit of 256",
		"gen:A2C100000":               "100000 cells: over the limit of 1024",
		"gen:A2C99999999999999999999": "too large a number",
	} {
		if _, err := def.Resolve(ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", ref, err, want)
		}
	}
	fixed := DefaultSizeLimits()
	if _, err := fixed.Resolve("gen:A2C5J100001"); err == nil || !strings.Contains(err.Error(), "this limit is fixed here") {
		t.Errorf("fixed limits: %v", err)
	}
	if in, err := raised.Resolve("gen:A2C5J100001"); err != nil || in.Arrivals.Jobs != 100001 {
		t.Errorf("raised limit, generated: %v", err)
	}
}

func TestSizeLimitsSet(t *testing.T) {
	l := DefaultSizeLimits()
	if err := l.Set("cells=4096"); err != nil || l.Cells != 4096 {
		t.Errorf("cells=4096: %v, %d", err, l.Cells)
	}
	for _, bad := range []string{"cell=4", "cells", "cells=0", "cells=-1", "cells=x"} {
		if err := l.Set(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := DefaultSizeLimits().String(); got != "areas=256,cells=1024,machines=8192,jobs=100000,products=256,route=64,operations=256" {
		t.Errorf("String() = %s", got)
	}
}

// TestGenNamesDistinguishParameters: gen:A4C8J7 and gen:A4C8 were both
// named gen:A4C8 in artifacts.
func TestGenNamesDistinguishParameters(t *testing.T) {
	for _, ref := range []string{"gen:A4C8J7", "gen:A4C8"} {
		in, err := Resolve(ref)
		if err != nil {
			t.Fatal(err)
		}
		if in.Name != ref {
			t.Errorf("%s is named %q", ref, in.Name)
		}
	}
}

// TestValuesStayFinite: a time of 1e308 passed validation and then made
// +Inf in sums (route work, due dates); every number is now bounded.
func TestValuesStayFinite(t *testing.T) {
	for _, tc := range []struct{ old, new, field string }{
		{"{op: cut, time: 10}", "{op: cut, time: 1e308}", "products[0].route[0].time"},
		{"horizon: 1000", "horizon: 1e300", "horizon"},
		{"cut: 1.0", "cut: 1e20", "areas[0].cells[0].capabilities.cut"},
		{"due_slack: 2", "due_slack: 1e200", "due_slack"},
		{"arrival: 1, due: 20", "arrival: 1, due: .inf", "arrivals.orders[1].due"},
		{"cap_kw: 5", "cap_kw: 1e16", "power.cap_kw"},
	} {
		_, err := parseTiny(t, DefaultSizeLimits(), tc.old, tc.new)
		var ie *InstanceError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%s: got %v, want a fault at %s", tc.new, err, tc.field)
		}
	}
}

// TestNamesRefuseControlCharacters: names and ids reach terminals, logs
// and payloads; an escape sequence in one is refused.
func TestNamesRefuseControlCharacters(t *testing.T) {
	for _, tc := range []struct{ old, new, field string }{
		{"name: tiny", `name: "tiny\e[2J"`, "name"},
		{"{id: C1, capabilities", `{id: "C1\r", capabilities`, "areas[0].cells[0].id"},
		{"family: F", `family: "F\u202e"`, "products[0].family"},
		{"- id: A1", `- id: "A1` + strings.Repeat("x", MaxNameBytes) + `"`, "areas[0].id"},
		{"{op: cut, time: 10}", `{op: "cut\x00", time: 10}`, "products[0].route[0].op"},
		{"name: tiny", "name: tiny\ndescription: \"a\\x07b\"", "description"},
	} {
		_, err := parseTiny(t, DefaultSizeLimits(), tc.old, tc.new)
		var ie *InstanceError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%s: got %v, want a fault at %s", tc.new, err, tc.field)
		}
	}
	if _, err := parseTiny(t, DefaultSizeLimits(), "name: tiny", "name: tiny\ndescription: \"two\\nlines\\tand a tab\""); err != nil {
		t.Errorf("a multi-line description: %v", err)
	}
}

// TestYAMLItemsBounded: an 8 MB file of one-character list items made the
// decoder's node tree take 1.6 GB; the items are counted before decoding.
func TestYAMLItemsBounded(t *testing.T) {
	doc := "format: coordbench-instance/v1\nname: x\nseeds:\n  test: [" + strings.Repeat("1,", 4<<20) + "1]\n"
	lim := DefaultSizeLimits()
	lim.Raise = "--plant-limit %s=%d"
	_, err := lim.Parse("big.yaml", []byte(doc))
	if err == nil || !strings.Contains(err.Error(), "YAML items (keys, values, list entries): over the limit of 1500000 (it grows with the jobs limit: --plant-limit jobs=369432") {
		t.Fatalf("got %v", err)
	}
	lim.Jobs = 369432
	if n := inputfile.Items([]byte(doc)); n > lim.maxYAMLItems() {
		t.Errorf("the suggested jobs limit admits %d items, not %d", lim.maxYAMLItems(), n)
	}
}
