package coord_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bytes"
	"encoding/json"
	"fmt"
	"github.com/coordbench/coordbench/des/coord"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

const examplePath = "../../examples/paradigms/adaptive.yaml"

func TestAdaptiveExampleChooses(t *testing.T) {
	var set coord.Paradigms
	m, err := set.AddFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Adaptive == nil || len(m.Adaptive.Rules) != 2 || m.RoutingAuthorityMode != coord.RoutingHolonic {
		t.Fatalf("example loads as %+v", m)
	}
	calm := coord.ModeState{PowerHeadroom: 0.5, CapableCells: 3}
	for _, tc := range []struct {
		name string
		edit func(s *coord.ModeState)
		rule int
		mode string
	}{
		{"calm", func(*coord.ModeState) {}, -1, "adaptive"},
		{"power pressure", func(s *coord.ModeState) { s.PowerHeadroom = 0.05 }, 0, "centralized"},
		{"headroom at the bound", func(s *coord.ModeState) { s.PowerHeadroom = 0.10 }, -1, "adaptive"},
		{"a capable cell down", func(s *coord.ModeState) { s.CapableCellsDown = 1 }, 0, "centralized"},
		{"a re-route", func(s *coord.ModeState) { s.Reroute = 1 }, 0, "centralized"},
		{"two rejections", func(s *coord.ModeState) { s.RecentRejections = 2 }, -1, "adaptive"},
		{"three rejections", func(s *coord.ModeState) { s.RecentRejections = 3 }, 1, "centralized"},
	} {
		s := calm
		tc.edit(&s)
		if rule, mode := m.Choose(&s); rule != tc.rule || mode != tc.mode {
			t.Errorf("%s: rule %d mode %s, want %d %s", tc.name, rule, mode, tc.rule, tc.mode)
		}
	}
	if got := m.Adaptive.Rules[0].When.String(); got != "power_headroom < 0.1 or capable_cells_down > 0 or reroute == 1" {
		t.Errorf("rule 0 reads %q", got)
	}
	// The same file again is no conflict; another definition under the id is.
	if _, err := set.AddFile(examplePath); err != nil {
		t.Errorf("the same file twice: %v", err)
	}
	other := strings.Replace(readFile(t, examplePath), "ge: 3", "ge: 4", 1)
	if _, err := set.AddFile(writeFile(t, "other.yaml", other)); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("a changed rule under the same id: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAdaptiveFileErrors: every malformed rule set is refused with the
// file's line and a message that says what is wrong.
func TestAdaptiveFileErrors(t *testing.T) {
	head := "mode_id: x\nrouting_authority_mode: hierarchical\ncell_contract_actions: accept_only\nplant_reroute_required: true\n"
	for _, tc := range []struct{ name, body, want string }{
		{"unknown feature", "adaptive:\n  rules:\n    - mode: centralized\n      when:\n        any:\n          - {feature: wip, gt: 1}\n          - {feature: wipp, gt: 1}\n",
			`:11: authority mode "x": adaptive.rules[0].when.any[1]: unknown feature "wipp"`},
		{"unknown mode", "adaptive:\n  rules:\n    - mode: central\n      when: {feature: wip, gt: 1}\n",
			`:7: authority mode "x": adaptive.rules[0].mode: unknown mode "central"`},
		{"no rules", "adaptive:\n  rules: []\n", ":6: authority mode \"x\": adaptive.rules: give at least one rule"},
		{"two forms", "adaptive:\n  rules:\n    - mode: centralized\n      when: {feature: wip, gt: 1, any: [{feature: wip, gt: 2}]}\n",
			"adaptive.rules[0].when: a condition has exactly one of all, any, not or feature (got 2)"},
		{"no comparison", "adaptive:\n  rules:\n    - mode: centralized\n      when: {feature: wip}\n", "feature wip has no comparison"},
		{"comparison without feature", "adaptive:\n  rules:\n    - mode: centralized\n      when: {not: {feature: wip, gt: 1}, lt: 3}\n", "comparisons (lt, le, gt, ge, eq, ne) go with a feature"},
		{"not a number", "adaptive:\n  rules:\n    - mode: centralized\n      when: {feature: wip, gt: .nan}\n", "the bound must be a finite number"},
		{"empty list", "adaptive:\n  rules:\n    - mode: centralized\n      when: {all: []}\n", ":8: authority mode \"x\": adaptive.rules[0].when.all: an empty list"},
		{"nested adaptive mode", "adaptive:\n  modes:\n    - {mode_id: y, routing_authority_mode: centralized, cell_contract_actions: accept_only, adaptive: {rules: [{mode: centralized, when: {feature: wip, gt: 1}}]}}\n  rules:\n    - mode: y\n      when: {feature: wip, gt: 1}\n",
			":7: authority mode \"x\": adaptive.modes[0]: y: a mode that rules choose is static"},
		{"taken id", "adaptive:\n  modes:\n    - {mode_id: centralized, routing_authority_mode: centralized, cell_contract_actions: accept_only}\n  rules:\n    - mode: centralized\n      when: {feature: wip, gt: 1}\n",
			`id "centralized" is taken`},
		{"unknown key", "adaptive:\n  rules:\n    - mode: centralized\n      if: {feature: wip, gt: 1}\n", "line 8: field if not found"},
		{"negative window", "adaptive:\n  rejection_window: -5\n  rules:\n    - mode: centralized\n      when: {feature: wip, gt: 1}\n", ":6: authority mode \"x\": adaptive.rejection_window: must be a positive number"},
		{"agent without offer", "adaptive:\n  selector: agent\n", ":5: authority mode \"x\": adaptive.offer: give between 2 and 16 modes"},
		{"agent with rules", "adaptive:\n  selector: agent\n  offer: [centralized, hierarchical]\n  rules:\n    - mode: centralized\n      when: {feature: wip, gt: 1}\n", "adaptive.rules: with selector: agent the mode_selector agent chooses"},
		{"offer twice", "adaptive:\n  selector: agent\n  offer: [centralized, centralized]\n", `adaptive.offer[1]: "centralized" is offered twice`},
		{"unknown offer", "adaptive:\n  selector: agent\n  offer: [centralized, local]\n", `adaptive.offer[1]: unknown mode "local"`},
		{"offer with rules selector", "adaptive:\n  offer: [centralized, hierarchical]\n  rules:\n    - mode: centralized\n      when: {feature: wip, gt: 1}\n", "adaptive.offer: offer is the mode_selector agent's choice"},
		{"unknown selector", "adaptive:\n  selector: oracle\n", `adaptive.selector: want rules or agent (got "oracle")`},
		{"too deep", "adaptive:\n  rules:\n    - mode: centralized\n      when: " + strings.Repeat("{not: ", 20) + "{feature: wip, gt: 1}" + strings.Repeat("}", 20) + "\n",
			"conditions nested deeper than 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := new(coord.Paradigms).AddFile(writeFile(t, "p.yaml", head+tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestStaticParadigmsUnchanged: a paradigm without rules is static, equal
// to itself, and different from its adaptive variant.
func TestStaticParadigmsUnchanged(t *testing.T) {
	for _, m := range coord.Builtins() {
		if m.Adaptive != nil || !m.Equal(m) {
			t.Errorf("%s: %+v", m.ID, m)
		}
	}
	a, err := new(coord.Paradigms).AddFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	own := a
	own.Adaptive = nil
	if a.Equal(own) || own.Equal(a) {
		t.Error("an adaptive paradigm equals its static switches")
	}
}

// TestParadigmSchema: docs/paradigm.schema.json accepts every paradigm
// file coordbench ships or documents and the built-ins, and rejects the
// malformed files that the loader rejects for their form.
func TestParadigmSchema(t *testing.T) {
	f, err := os.Open("../../docs/paradigm.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const id = "paradigm.schema.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, yamlText []byte) error {
		var v any
		if err := yaml.Unmarshal(yamlText, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return sch.Validate(inst)
	}
	good := map[string][]byte{}
	shipped, err := filepath.Glob("../../examples/paradigms/*.yaml")
	if err != nil || len(shipped) == 0 {
		t.Fatalf("examples/paradigms: %v %v", shipped, err)
	}
	for _, path := range append(shipped, "../harness/check/testdata/adaptive_stress.yaml") {
		good[path] = []byte(readFile(t, path))
	}
	for i, block := range fenced(t, "../../docs/paradigms.md", "yaml") {
		good[fmt.Sprintf("docs/paradigms.md yaml block %d", i+1)] = []byte(block)
	}
	for _, m := range coord.Builtins() {
		b, _ := json.Marshal(m)
		good["built-in "+m.ID] = b
	}
	for name, text := range good {
		if err := check(name, text); err != nil {
			t.Errorf("%s: the schema rejects it: %v", name, err)
		}
	}
	head := "mode_id: x\nrouting_authority_mode: hierarchical\ncell_contract_actions: accept_only\n"
	for _, bad := range []string{
		"adaptive:\n  rules: []\n",
		"adaptive:\n  rules:\n    - {mode: centralized, when: {feature: wipp, gt: 1}}\n",
		"adaptive:\n  rules:\n    - {mode: centralized, when: {feature: wip}}\n",
		"adaptive:\n  rules:\n    - {mode: centralized, when: {feature: wip, gt: 1, any: [{feature: wip, gt: 2}]}}\n",
		"adaptive:\n  rules:\n    - {mode: centralized, when: {all: []}}\n",
		"adaptive:\n  rules:\n    - {mode: centralized, if: {feature: wip, gt: 1}}\n",
		"adaptive:\n  rejection_window: -5\n  rules:\n    - {mode: centralized, when: {feature: wip, gt: 1}}\n",
		"colour: red\n",
		"adaptive:\n  selector: agent\n  offer: [centralized]\n",
		"adaptive:\n  selector: agent\n  offer: [centralized, hierarchical]\n  rules:\n    - {mode: centralized, when: {feature: wip, gt: 1}}\n",
		"adaptive:\n  selector: oracle\n  offer: [centralized, hierarchical]\n",
		"bid_invitations: -1\n",
		"bid_invitations: 1.5\n",
		"view_detail: terse\n",
	} {
		if err := check(bad, []byte(head+bad)); err == nil {
			t.Errorf("the schema accepts %q", bad)
		}
	}
}

// TestAdaptiveSummary: des list's one line on how a paradigm adapts.
func TestAdaptiveSummary(t *testing.T) {
	var set coord.Paradigms
	rules, err := set.AddFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := set.AddFile("../../examples/paradigms/adaptive_agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m    coord.AuthorityMode
		want string
	}{
		{coord.Centralized(), ""},
		{rules, "2 rules choose centralized; otherwise its own switches"},
		{agent, "the mode_selector agent chooses among centralized, hierarchical, heterarchical_cnp, holonic_hybrid"},
	} {
		if got := tc.m.Summary(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.m.ID, got, tc.want)
		}
	}
}
