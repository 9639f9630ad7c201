package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/suiterun"
)

// Suites of one process each name paradigms from their own set: two
// suites resolved and run at the same time, with paradigm files that
// declare "custom" under different switches (and one more id in one of
// them), each run only their own paradigms, and a suite without files
// only the built-ins, during and after the others.
func TestConcurrentSuitesKeepTheirParadigms(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// "custom" is centralized in suite a, a contract net in suite b.
	customA, customB, onlyB := coord.Centralized(), coord.HeterarchicalCNP(), coord.Hierarchical()
	customA.ID, customA.Description = "custom", ""
	customB.ID, customB.Description = "custom", ""
	onlyB.ID, onlyB.Description = "only_b", ""
	fileA := write("a.yaml", "mode_id: custom\nrouting_authority_mode: centralized\ncell_contract_actions: accept_only\nplant_reroute_required: true\n")
	fileB := write("b.yaml", "mode_id: custom\nrouting_authority_mode: heterarchical_cnp\ncell_contract_actions: accept_reject\nmediated_bid_round_enabled: true\n")
	fileOnlyB := write("only_b.yaml", "mode_id: only_b\nrouting_authority_mode: hierarchical\ncell_contract_actions: accept_only\nplant_reroute_required: true\n")

	suites := []struct {
		name  string
		files []string
		want  []coord.AuthorityMode
	}{
		{"a", []string{fileA}, append(coord.Builtins(), customA)},
		{"b", []string{fileB, fileOnlyB}, append(coord.Builtins(), customB, onlyB)},
		{"none", nil, coord.Builtins()},
	}
	options := func(files []string) harness.SuiteOptions {
		return harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1", Paradigms: "all", ParadigmFiles: files, Seeds: "1", Controllers: "rule"}
	}
	reports := make([]*harness.SuiteReport, len(suites))
	var wg sync.WaitGroup
	for i, s := range suites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := harness.ResolveSuite(options(s.files))
			if err != nil {
				t.Errorf("suite %s: %v", s.name, err)
				return
			}
			reports[i], err = harness.RunSuite(context.Background(), res, filepath.Join(tmp, s.name), harness.SuiteRunOptions{Options: suiterun.Options{Workers: 2}})
			if err != nil {
				t.Errorf("suite %s: %v", s.name, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// metricsOf is each case's metrics by paradigm id.
	metricsOf := func(rep *harness.SuiteReport) map[string][]float64 {
		out := map[string][]float64{}
		for _, r := range rep.Cases {
			if r.Status == harness.StatusError {
				t.Errorf("case %s: %s", r.Case.ID, r.Err)
			}
			for _, m := range harness.SuiteMetrics() {
				out[r.Case.Paradigm.ID] = append(out[r.Case.Paradigm.ID], m.Value(&r.Metrics))
			}
		}
		return out
	}
	got := make([]map[string][]float64, len(suites))
	for i, s := range suites {
		if !slices.Equal(reports[i].Suite.Config.Paradigms, s.want) {
			t.Errorf("suite %s: paradigms %+v, want %+v", s.name, reports[i].Suite.Config.Paradigms, s.want)
		}
		var ran []coord.AuthorityMode
		for _, r := range reports[i].Cases {
			ran = append(ran, r.Case.Paradigm)
		}
		if !slices.Equal(ran, s.want) {
			t.Errorf("suite %s ran %+v, want %+v", s.name, ran, s.want)
		}
		cfg, err := harness.ReadSuiteConfig(filepath.Join(tmp, s.name))
		if err != nil || !slices.Equal(cfg.Paradigms, s.want) {
			t.Errorf("suite %s: suite.json paradigms %+v (%v), want %+v", s.name, cfg, err, s.want)
		}
		got[i] = metricsOf(reports[i])
	}
	// Each "custom" ran its own switches: the episode of the built-in it copies.
	if !slices.Equal(got[0]["custom"], got[0]["centralized"]) || !slices.Equal(got[1]["custom"], got[1]["heterarchical_cnp"]) ||
		slices.Equal(got[0]["custom"], got[1]["custom"]) {
		t.Errorf("custom paradigms ran other switches: a %v (centralized %v), b %v (heterarchical_cnp %v)",
			got[0]["custom"], got[0]["centralized"], got[1]["custom"], got[1]["heterarchical_cnp"])
	}
	// After the others, a suite without files still sees the built-ins only.
	s, err := harness.ResolveSuite(options(nil))
	if err != nil || !slices.Equal(s.Config.Paradigms, coord.Builtins()) {
		t.Errorf("a later suite without paradigm files: %v %+v", err, s)
	}
	if _, err := harness.ResolveSuite(harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1", Paradigms: "custom", Seeds: "1", Controllers: "rule"}); err == nil {
		t.Error("a suite without paradigm files found another suite's custom paradigm")
	}
}
