package round

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

// labelTasks: three global tasks (DepAll) and three segmented ones
// (DepNeighbours, DepPrefix, DepAll).
var labelTasks = []string{"I-01", "II-13", "III-22", "II-14", "II-20", "III-21"}

// checkLabels checks every agent's labels against want (agents not in want
// must be correct with no labels) and Result.Failures against the labels;
// the flow-based labels must equal them too.
func checkLabels(t *testing.T, name string, res *Result, want map[int][]string) {
	t.Helper()
	checkLabelsFlow(t, name, res, want, want)
}

// checkLabelsFlow is checkLabels with separate expectations for the
// content-aware labels (want) and the flow-based ones (flow).
func checkLabelsFlow(t *testing.T, name string, res *Result, want, flow map[int][]string) {
	t.Helper()
	for _, k := range []struct {
		kind     string
		want     map[int][]string
		labels   func(AgentResult) []string
		failures map[string]int
	}{
		{"labels", want, func(a AgentResult) []string { return a.Labels }, res.Failures},
		{"labels_flow", flow, func(a AgentResult) []string { return a.LabelsFlow }, res.FailuresFlow},
	} {
		counts := map[string]int{}
		for i, ar := range res.Agents {
			w := k.want[i]
			if w == nil {
				w = []string{}
			}
			if got := k.labels(ar); !slices.Equal(got, w) {
				t.Errorf("%s: agent %d %s %q, want %q (answer %s, seen %v, informed %v, correct %v)", name, i, k.kind, got, w, ar.Answer, ar.Seen, ar.Informed, ar.Correct)
			}
			if ar.Correct != (len(w) == 0) {
				t.Errorf("%s: agent %d correct = %v with expected %s %q", name, i, ar.Correct, k.kind, w)
			}
			for _, l := range w {
				counts[l]++
			}
		}
		if !maps.Equal(k.failures, counts) {
			t.Errorf("%s: %s counts %v, want %v", name, k.kind, k.failures, counts)
		}
	}
}

func withConsensus(global bool, labels ...string) []string {
	if global {
		labels = append(labels, LabelConsensus)
	}
	slices.Sort(labels)
	return labels
}

// TestFaultyLabels: faulty agents get exactly the expected failure labels,
// for each variant, on global and segmented tasks, under each protocol;
// the reference agents next to them are correct and unlabelled.
func TestFaultyLabels(t *testing.T) {
	const n = 4
	for _, id := range labelTasks {
		in := seeded(t, id, n, 3)
		global := !in.Task.Segmented
		misinformed := LabelComputation
		if global {
			misinformed = LabelPremature
		}
		for _, p := range protocols {
			cases := []struct {
				name   string
				faulty map[int]Agent
				rounds int
				want   map[int][]string
				flow   map[int][]string // nil: as want
			}{
				{"premature@2", map[int]Agent{2: NewPremature()}, 0,
					map[int][]string{2: withConsensus(global, LabelPremature)}, nil},
				{"disagreer@2", map[int]Agent{2: NewDisagreer()}, 0,
					map[int][]string{2: withConsensus(global, LabelComputation)}, nil},
				{"disagreer@0", map[int]Agent{0: NewDisagreer()}, 0,
					map[int][]string{0: withConsensus(global, LabelComputation)}, nil},
				{"miscompute@3", map[int]Agent{3: NewMiscompute()}, 0,
					map[int][]string{3: withConsensus(global, LabelComputation)}, nil},
				// The gatherer misinforms everyone: all wrong, all agree. On
				// a global task the others received a wrong answer and no
				// data: by content they submitted without the information
				// (premature); by flow the gatherer's messages covered
				// every shard. On a segmented task Perturb wraps each
				// segment in a list, so the message still holds the
				// correct segment: computation errors by content too.
				{"miscompute@0", map[int]Agent{0: NewMiscompute()}, 0, map[int][]string{
					0: {LabelComputation}, 1: {misinformed}, 2: {misinformed}, 3: {misinformed}}, map[int][]string{
					0: {LabelComputation}, 1: {LabelComputation}, 2: {LabelComputation}, 3: {LabelComputation}}},
				// A silent teammate: on a global task the others, correct,
				// get no label; it gets no_submission only.
				{"never@1", map[int]Agent{1: neverSubmit{}}, 8,
					map[int][]string{1: {LabelNoSubmission}}, nil},
			}
			for _, c := range cases {
				name := fmt.Sprintf("%s %s %s", id, p, c.name)
				res := mustRun(t, Config{Instance: in, Protocol: p, MaxRounds: c.rounds}, NewTeam(n, c.faulty))
				flow := c.flow
				if flow == nil {
					flow = c.want
				}
				checkLabelsFlow(t, name, res, c.want, flow)
				if len(res.AgentErrors) != 0 || res.CallErrors != 0 {
					t.Errorf("%s: agent errors %v, call errors %d", name, res.AgentErrors, res.CallErrors)
				}
			}
		}
	}
}

// TestPrematureProvenance: a premature submitter has seen only its own
// shard; a non-submitter's seen set is its provenance at the end.
func TestPrematureProvenance(t *testing.T) {
	in := seeded(t, "I-01", 4, 3)
	for _, p := range protocols {
		res := mustRun(t, Config{Instance: in, Protocol: p}, NewTeam(4, map[int]Agent{2: NewPremature()}))
		if a := res.Agents[2]; !slices.Equal(a.Seen, []int{2}) || a.Round != 1 || !a.Submitted {
			t.Errorf("%s premature: %+v", p, a)
		}
		res = mustRun(t, Config{Instance: in, Protocol: p, MaxRounds: 5}, NewTeam(4, map[int]Agent{1: neverSubmit{}}))
		if a := res.Agents[1]; a.Submitted || len(a.Seen) == 0 || !slices.Contains(a.Seen, 1) {
			t.Errorf("%s never submits: %+v", p, a)
		}
	}
}

// TestReferenceProvenance: after a reference run the gatherer has seen
// every shard, and every other agent has seen (through the answers it
// read, which carry the gatherer's provenance) every shard its answer
// depends on — with the star topology, all of them. Nobody is labelled.
func TestReferenceProvenance(t *testing.T) {
	for _, id := range labelTasks {
		for _, n := range []int{1, 2, 5} {
			in := seeded(t, id, n, 9)
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			for _, p := range protocols {
				res := mustRun(t, Config{Instance: in, Protocol: p}, NewReferenceTeam(n))
				name := fmt.Sprintf("%s N=%d %s", id, n, p)
				checkPerfect(t, name, res)
				checkLabels(t, name, res, nil)
				for i, ar := range res.Agents {
					if !covers(ar.Seen, in.Deps[i]) {
						t.Errorf("%s: agent %d seen %v lacks deps %v", name, i, ar.Seen, in.Deps[i])
					}
					// By content too: the gatherer read every shard, the
					// others their correct answer.
					if !covers(ar.Informed, in.Deps[i]) {
						t.Errorf("%s: agent %d informed %v lacks deps %v", name, i, ar.Informed, in.Deps[i])
					}
					if !slices.Equal(ar.Seen, all) {
						t.Errorf("%s: agent %d seen %v, want all %v", name, i, ar.Seen, all)
					}
				}
			}
		}
	}
}

// TestLabelRules exercises label on hand-built results: segmented tasks
// never get consensus_failure, a global team that agrees on a wrong answer
// does not either, and correct agents get nothing even when others differ.
func TestLabelRules(t *testing.T) {
	global := seeded(t, "I-01", 3, 1)
	seg := seeded(t, "II-14", 3, 1)
	// mk builds a scored result; informed (by content) is seen (by flow)
	// unless given.
	mk := func(in *task.Instance, answers []string, seen [][]int, informed ...[]int) *Result {
		res := &Result{Agents: make([]AgentResult, len(answers))}
		for i, a := range answers {
			ar := &res.Agents[i]
			ar.ID = i
			if a == "" {
				ar.Answer = json.RawMessage("null")
				continue
			}
			ar.Submitted, ar.Answer, ar.Seen, ar.Informed = true, json.RawMessage(a), seen[i], seen[i]
			if i < len(informed) {
				ar.Informed = informed[i]
			}
			ar.Correct = task.Correct(in.Task, in.Expected[i], ar.Answer)
		}
		label(res, in)
		return res
	}
	full := [][]int{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}}
	gold := string(global.Expected[0])
	wrong := string(Perturb(global.Expected[0]))

	// All agree on a wrong answer: computation errors only.
	res := mk(global, []string{wrong, wrong, wrong}, full)
	checkLabels(t, "agree wrong", res, map[int][]string{0: {LabelComputation}, 1: {LabelComputation}, 2: {LabelComputation}})
	// One differs: it alone is labelled; the correct ones are not.
	res = mk(global, []string{gold, wrong, gold}, [][]int{{0, 1, 2}, {1}, {0, 1, 2}})
	checkLabels(t, "one differs", res, map[int][]string{1: {LabelConsensus, LabelPremature}})
	// Normalisation: " 5 " and 5 are the same answer to the S rule.
	res = mk(global, []string{wrong, `"` + wrong + ` "`, wrong}, full)
	checkLabels(t, "normalised", res, map[int][]string{0: {LabelComputation}, 1: {LabelComputation}, 2: {LabelComputation}})
	// Disagreeing only with a teammate that never submitted is a consensus
	// failure: the team did not converge on one answer.
	res = mk(global, []string{wrong, wrong, ""}, full)
	checkLabels(t, "silent teammate", res, map[int][]string{0: {LabelComputation, LabelConsensus}, 1: {LabelComputation, LabelConsensus}, 2: {LabelNoSubmission}})
	// Every shard's messages reached the agents (flow) but no content
	// carried the data (content): premature by content, computation by flow.
	res = mk(global, []string{wrong, wrong, wrong}, full, []int{0}, []int{1}, []int{0, 1, 2})
	checkLabelsFlow(t, "chat without data", res,
		map[int][]string{0: {LabelPremature}, 1: {LabelPremature}, 2: {LabelComputation}},
		map[int][]string{0: {LabelComputation}, 1: {LabelComputation}, 2: {LabelComputation}})

	// Segmented: different answers are expected; no consensus label. Agent
	// 0 depends on {0, 1} only (neighbours).
	a0, a1 := string(Perturb(seg.Expected[0])), string(seg.Expected[1])
	res = mk(seg, []string{a0, a1, ""}, [][]int{{0, 1}, {1}, nil})
	checkLabels(t, "segmented", res, map[int][]string{0: {LabelComputation}, 2: {LabelNoSubmission}})
	res = mk(seg, []string{a0, a1, ""}, [][]int{{0}, {1}, nil})
	checkLabels(t, "segmented premature", res, map[int][]string{0: {LabelPremature}, 2: {LabelNoSubmission}})
}

func TestFailuresJSON(t *testing.T) {
	in := seeded(t, "I-01", 3, 2)
	res := mustRun(t, Config{Instance: in, Protocol: proto.P2P}, NewTeam(3, map[int]Agent{1: NewDisagreer()}))
	b, _ := json.Marshal(res)
	var m struct {
		Failures map[string]int `json:"failures"`
		Agents   []struct {
			Seen   []int    `json:"seen"`
			Labels []string `json:"labels"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Failures[LabelConsensus] != 1 || m.Failures[LabelComputation] != 1 || len(m.Failures) != 2 {
		t.Errorf("failures %v", m.Failures)
	}
	if len(m.Agents) != 3 || m.Agents[0].Labels == nil || len(m.Agents[0].Labels) != 0 || len(m.Agents[1].Labels) != 2 || len(m.Agents[2].Seen) != 3 {
		t.Errorf("agents %s", b)
	}
}

// readSubmit shares its shard in round 1 and, in round 2, reads and submits
// a wrong answer in the same turn. As a Replier (next) it decided the turn
// before the reads returned.
type readSubmit struct {
	next  bool
	wrong json.RawMessage
}

func (a readSubmit) SeesResultsNextTurn() bool { return a.next }

func (a readSubmit) Turn(_ context.Context, t *Turn) error {
	if t.Round == 1 {
		_, _, err := t.Call(proto.ToolBroadcast, map[string]string{"content": string(t.Shard)})
		return err
	}
	if _, _, err := t.Call(proto.ToolReceive, nil); err != nil {
		return err
	}
	_, _, err := t.Call(proto.ToolSubmit, map[string]json.RawMessage{"answer": a.wrong})
	return err
}

// TestReplierSeesResultsNextTurn: reads in the turn that submits count for an
// agent that sees results at once (computation), not for a Replier
// (premature, by flow and by content).
func TestReplierSeesResultsNextTurn(t *testing.T) {
	in := seeded(t, "I-01", 3, 1)
	wrong := Perturb(in.Expected[0])
	for _, next := range []bool{false, true} {
		agents := []Agent{readSubmit{next, wrong}, readSubmit{next, wrong}, readSubmit{next, wrong}}
		res, err := Run(t.Context(), Config{Instance: in, Protocol: proto.Broadcast, MaxRounds: 3}, agents)
		if err != nil {
			t.Fatal(err)
		}
		want := LabelComputation
		if next {
			want = LabelPremature
		}
		for _, a := range res.Agents {
			if !slices.Equal(a.Labels, []string{want}) || !slices.Equal(a.LabelsFlow, []string{want}) {
				t.Errorf("next turn %v: agent %d labels %v / flow %v, want %s (seen %v, informed %v)", next, a.ID, a.Labels, a.LabelsFlow, want, a.Seen, a.Informed)
			}
		}
	}
}
