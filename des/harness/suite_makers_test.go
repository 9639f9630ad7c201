package harness_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

// namedMaker makes rule controllers under a controller name, a model and
// a framework (a stand-in for an LLM controller's maker).
type namedMaker struct{ name, model, framework string }

func (m namedMaker) Name() string      { return m.name }
func (m namedMaker) Model() string     { return m.model }
func (m namedMaker) Framework() string { return m.framework }
func (m namedMaker) New(seed uint64) (coord.Controller, error) {
	return policy.New("rule", seed)
}

// TestSuiteCrossesMakersOfOneName: several makers of one controller name
// (one per model and framework) are crossed with the other dimensions, in
// the order given, with the model part of case ids telling them apart;
// two makers with one model part are refused.
func TestSuiteCrossesMakersOfOneName(t *testing.T) {
	mks := []harness.ControllerMaker{namedMaker{"llm", "a", "graph"}, namedMaker{"llm", "b", "graph"}, namedMaker{"llm", "a", "relay"}}
	s, err := harness.ResolveSuite(harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1", Paradigms: "centralized", Controllers: "llm,rule", Seeds: "1,2", Makers: mks})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range s.Cases {
		ids = append(ids, c.ID)
	}
	want := []string{
		"A3C9-1__centralized__llm__a-graph__s1", "A3C9-1__centralized__llm__a-graph__s2",
		"A3C9-1__centralized__llm__b-graph__s1", "A3C9-1__centralized__llm__b-graph__s2",
		"A3C9-1__centralized__llm__a-relay__s1", "A3C9-1__centralized__llm__a-relay__s2",
		"A3C9-1__centralized__rule__s1", "A3C9-1__centralized__rule__s2",
	}
	if !slices.Equal(ids, want) || s.Cases[2].Model != "b" || s.Cases[4].Framework != "relay" {
		t.Errorf("cases %v", ids)
	}
	_, err = harness.ResolveSuite(harness.SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1", Paradigms: "centralized", Controllers: "llm", Seeds: "1",
		Makers: []harness.ControllerMaker{namedMaker{"llm", "a", "graph"}, namedMaker{"llm", "a", "graph"}}})
	if err == nil || !strings.Contains(err.Error(), `share the case-id part "a-graph"`) {
		t.Errorf("two makers of one model part: %v", err)
	}
}
