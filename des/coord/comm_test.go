package coord_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

// Tests of the communication-efficiency switches (bid_invitations,
// view_detail): activation.go and compress.go.

// withKnobs is m under another id with the two switches set.
func withKnobs(m coord.AuthorityMode, id string, k int, detail string) coord.AuthorityMode {
	m.ID, m.BidInvitations, m.ViewDetail, m.Description = id, k, detail, ""
	return m
}

// TestKnobValidation: a switch with no effect under the mode's routing,
// or out of range, is refused with a message that names it; so is an
// adaptive paradigm's mode that misuses one.
func TestKnobValidation(t *testing.T) {
	for _, b := range []struct {
		m    coord.AuthorityMode
		want string
	}{
		{withKnobs(coord.Centralized(), "x", 2, ""), "bid_invitations has no effect without a bid round"},
		{withKnobs(coord.Hierarchical(), "x", 1, ""), "bid_invitations has no effect without a bid round"},
		{withKnobs(coord.HolonicHybrid(), "x", 3, ""), "set mediated_bid_round_enabled"},
		{withKnobs(coord.HeterarchicalCNP(), "x", -1, ""), "bid_invitations must be between 0"},
		{withKnobs(coord.HeterarchicalCNP(), "x", coord.MaxBidInvitations+1, ""), "bid_invitations must be between 0"},
		{withKnobs(coord.Centralized(), "x", 0, "terse"), `view_detail must be full or summary (got "terse")`},
		{withKnobs(coord.Centralized(), "x", 0, "Summary"), "view_detail must be full or summary"},
	} {
		err := b.m.Validate()
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), `"x"`) {
			t.Errorf("%+v: error %v, want it to name the mode and say %q", b.m, err, b.want)
		}
	}
	for _, m := range []coord.AuthorityMode{
		withKnobs(coord.HeterarchicalCNP(), "k1", 1, "summary"),
		withKnobs(coord.HeterarchicalCNP(), "k0", 0, "full"),
		withKnobs(myHybrid, "hyb", 1, ""),
		withKnobs(coord.Hierarchical(), "sum", 0, "summary"),
	} {
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", m.ID, err)
		}
	}
	// Inside an adaptive paradigm's modes, from a file: the error names the
	// file, the line and the mode.
	path := filepath.Join(t.TempDir(), "bad.yaml")
	text := `mode_id: bad
routing_authority_mode: heterarchical_cnp
cell_contract_actions: accept_reject
mediated_bid_round_enabled: true
adaptive:
  modes:
    - mode_id: lean
      routing_authority_mode: hierarchical
      cell_contract_actions: accept_only
      bid_invitations: 2
  rules:
    - {mode: lean, when: {feature: wip, gt: 3}}
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := new(coord.Paradigms).AddFile(path)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:7") || !strings.Contains(err.Error(), "adaptive.modes[0]") ||
		!strings.Contains(err.Error(), "bid_invitations has no effect") {
		t.Errorf("a lean mode with bid_invitations and no bid round: %v", err)
	}
	// A negative k never decodes silently as something else.
	if err := os.WriteFile(path, []byte("mode_id: y\nrouting_authority_mode: heterarchical_cnp\ncell_contract_actions: accept_reject\nmediated_bid_round_enabled: true\nbid_invitations: many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := new(coord.Paradigms).AddFile(path); err == nil {
		t.Error("bid_invitations: many was accepted")
	}
}

// TestShippedKnobParadigms: every paradigm file under examples/paradigms
// loads, and the communication-efficiency examples that the docs name
// set the switches they are named for.
func TestShippedKnobParadigms(t *testing.T) {
	files, err := filepath.Glob("../../examples/paradigms/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples/paradigms: %v %v", files, err)
	}
	var set coord.Paradigms
	got := map[string]coord.AuthorityMode{}
	for _, f := range files {
		m, err := set.AddFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got[m.ID] = m
	}
	for id, want := range map[string][2]any{
		"cnp_k1": {1, ""}, "cnp_k2": {2, ""}, "my_hybrid_k1": {1, ""},
		"centralized_summary": {0, "summary"}, "hierarchical_summary": {0, "summary"},
		"cnp_summary": {0, "summary"}, "holonic_summary": {0, "summary"},
	} {
		m, ok := got[id]
		if !ok || m.BidInvitations != want[0].(int) || m.ViewDetail != want[1].(string) {
			t.Errorf("examples/paradigms: %s is %+v", id, m)
		}
	}
	// The summary files are the built-ins with summary views, nothing more.
	for _, b := range coord.Builtins() {
		short := map[string]string{"heterarchical_cnp": "cnp", "holonic_hybrid": "holonic"}[b.ID]
		if short == "" {
			short = b.ID
		}
		if m := got[short+"_summary"]; withKnobs(m, b.ID, 0, "") != withKnobs(b, b.ID, 0, "") {
			t.Errorf("%s_summary is not %s with summary views: %+v", short, b.ID, m)
		}
	}
	if m := got["my_hybrid"]; withKnobs(m, "my_hybrid", 0, "") != myHybrid {
		t.Errorf("examples/paradigms/my_hybrid.yaml is not the seed's my_hybrid: %+v", m)
	}
}

// stepper runs one episode step by step under a paradigm with a
// controller.
type stepper struct {
	eng *factory.Engine
	in  *coord.Interpreter
	c   coord.Controller
}

func newStepper(t *testing.T, ref string, seed uint64, m coord.ModeSelector, c coord.Controller) *stepper {
	t.Helper()
	inst, err := factory.Resolve(ref)
	if err != nil {
		t.Fatal(err)
	}
	eng := factory.NewEngine(factory.Compile(inst), seed)
	in, err := coord.NewInterpreter(eng, m)
	if err != nil {
		t.Fatal(err)
	}
	return &stepper{eng: eng, in: in, c: c}
}

// next advances to the next decision (nil at the end of the episode, or
// at the step bound).
func (s *stepper) next(t *testing.T) *coord.Decision {
	t.Helper()
	if s.in.Steps() >= 5000 || !s.eng.Advance() {
		return nil
	}
	s.in.Observe(s.eng.Records())
	d := s.in.Next()
	if d == nil {
		t.Fatalf("t=%g: no decision: %v", s.eng.Now(), s.in.Err())
	}
	return d
}

// apply answers d with the controller.
func (s *stepper) apply(t *testing.T, d *coord.Decision) []coord.Audit {
	t.Helper()
	acts, err := s.c.Act(context.Background(), d)
	audits, aerr := s.in.Apply(d, acts, s.c.Source(), err)
	if aerr != nil {
		t.Fatal(aerr)
	}
	return audits
}

// bidStep is a bid round seen through its payloads and messages.
type bidStep struct {
	item                 coord.WorkItem
	round                int
	bidders, invited, up []string // up: the ranking's cells in order
	announced            []string
	declined             []string // the ranking's cells marked as having declined
}

// runBids plays an episode and records each bid round, checking on the
// way that the payloads agree with the cut they record.
func runBids(t *testing.T, ref string, seed uint64, m coord.ModeSelector, c coord.Controller) (rounds []bidStep, steps, msgs int) {
	t.Helper()
	s := newStepper(t, ref, seed, m, c)
	for d := s.next(t); d != nil; d = s.next(t) {
		var r *bidStep
		for id, v := range d.ActiveAgents {
			if v.Kind != coord.KindBid {
				continue
			}
			inv := v.Context.Contract.Invitation
			if r == nil {
				r = &bidStep{item: *v.Context.WorkItem, round: v.Context.Contract.Round}
				if inv != nil {
					for _, x := range inv.Ranking {
						r.up = append(r.up, x.Cell)
						if x.Invited {
							r.invited = append(r.invited, "cell:"+x.Cell)
						}
						if x.Declined {
							r.declined = append(r.declined, x.Cell)
						}
					}
				}
			}
			r.bidders = append(r.bidders, id)
		}
		n0 := len(s.in.Messages)
		s.apply(t, d)
		if r == nil {
			continue
		}
		for _, msg := range s.in.Messages[n0:] {
			if msg.Type == coord.MsgAnnounce {
				r.announced = append(r.announced, msg.Receiver)
			}
		}
		slices.Sort(r.bidders)
		slices.Sort(r.invited)
		rounds = append(rounds, *r)
	}
	return rounds, s.in.Steps(), len(s.in.Messages)
}

// TestInvitationCut: under bid_invitations k the bid round activates and
// messages exactly the invited cells, at most k of them, the cut recorded
// in their payloads; it is deterministic; and it saves messages.
func TestInvitationCut(t *testing.T) {
	for _, m := range []coord.AuthorityMode{
		withKnobs(coord.HeterarchicalCNP(), "cnp_k2", 2, ""),
		withKnobs(myHybrid, "hyb_k1", 1, ""),
	} {
		for _, ref := range []string{"A5C12-1", "A3C9-1"} {
			for _, ctl := range []string{"rule", "greedy"} {
				c, err := policy.New(ctl, 1)
				if err != nil {
					t.Fatal(err)
				}
				rounds, _, msgs := runBids(t, ref, 1, m, c)
				again, _, msgs2 := runBids(t, ref, 1, m, c)
				if msgs != msgs2 || fmt.Sprint(rounds) != fmt.Sprint(again) {
					t.Fatalf("%s %s %s: two runs cut differently", m.ID, ref, ctl)
				}
				cut := 0
				for _, r := range rounds {
					if len(r.up) == 0 {
						t.Fatalf("%s %s %s: a bid round of job %d without its invitation", m.ID, ref, ctl, r.item.Job)
					}
					if !slices.Equal(r.bidders, r.invited) || len(r.invited) != min(m.BidInvitations, len(r.up)) {
						t.Fatalf("%s %s %s: job %d: bidders %v, invited %v of %v", m.ID, ref, ctl, r.item.Job, r.bidders, r.invited, r.up)
					}
					if !slices.Equal(slices.Sorted(slices.Values(r.announced)), r.invited) {
						t.Fatalf("%s %s %s: job %d: announced to %v, invited %v", m.ID, ref, ctl, r.item.Job, r.announced, r.invited)
					}
					if len(r.up) > len(r.invited) {
						cut++
					}
				}
				base := m
				base.BidInvitations = 0
				baseRounds, _, baseMsgs := runBids(t, ref, 1, base, c)
				for _, r := range baseRounds {
					if r.up != nil {
						t.Fatalf("%s: an invitation without bid_invitations", base.ID)
					}
				}
				t.Logf("%s %s %s: %d rounds, %d cut; %d messages, %d without the cut", m.ID, ref, ctl, len(rounds), cut, msgs, baseMsgs)
				if cut == 0 || msgs >= baseMsgs {
					t.Errorf("%s %s %s: %d rounds cut, %d messages against %d: the cut saves nothing", m.ID, ref, ctl, cut, msgs, baseMsgs)
				}
			}
		}
	}
}

// decliner declines every announcement and otherwise plays the rule.
type decliner struct{ policy.Rule }

func (decliner) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	out := d.Answer()
	for id, v := range d.ActiveAgents {
		out[id] = policy.Rule{}.ChooseView(v)
		if v.Kind == coord.KindBid {
			out[id] = len(v.Options) - 1 // decline
		}
	}
	return out, nil
}

// TestReannouncementWidens: when every invited cell declines, the plant's
// next announcement of the item goes first to the cells not asked yet,
// and the cells that declined are marked so in the ranking.
func TestReannouncementWidens(t *testing.T) {
	m := withKnobs(coord.HeterarchicalCNP(), "cnp_k1", 1, "")
	rounds, _, _ := runBids(t, "A5C12-1", 1, m, decliner{})
	widened := 0
	for i := 1; i < len(rounds); i++ {
		prev, r := rounds[i-1], rounds[i]
		if r.item != prev.item || r.round != prev.round+1 {
			continue
		}
		// The decliners of the earlier rounds rank last, marked.
		for _, c := range prev.invited {
			if !slices.Contains(r.declined, strings.TrimPrefix(c, "cell:")) {
				t.Fatalf("job %d round %d: %s declined round %d and is not marked (%v)", r.item.Job, r.round, c, prev.round, r.declined)
			}
		}
		if len(r.up) > len(r.declined) {
			if slices.Contains(r.declined, strings.TrimPrefix(r.invited[0], "cell:")) {
				t.Fatalf("job %d round %d: invited %v, a decliner, before a cell not asked yet (%v)", r.item.Job, r.round, r.invited, r.up)
			}
			widened++
		}
	}
	if widened == 0 {
		t.Fatal("no re-announcement reached a new cell")
	}
}

// TestSummaryViewsAreTotals: a paradigm with summary views and its full
// twin, played in lockstep by the rule controller (which reads a cell's
// machines only by state, so it decides the same), give payloads that
// differ only in the observation's lists, each replaced by its totals.
func TestSummaryViewsAreTotals(t *testing.T) {
	sch := loadSchemas(t)
	for _, base := range append(coord.Builtins(), myHybrid) {
		t.Run(base.ID, func(t *testing.T) {
			t.Parallel()
			summaryLockstep(t, sch, base)
		})
	}
}

// summaryLockstep plays base and base with summary views in lockstep.
func summaryLockstep(t *testing.T, sch schemas, base coord.AuthorityMode) {
	sum := withKnobs(base, base.ID+"_summary", 0, coord.DetailSummary)
	full := newStepper(t, "A5C12-1", 1, base, policy.Rule{})
	short := newStepper(t, "A5C12-1", 1, sum, policy.Rule{})
	var fullBytes, shortBytes int
	roles := map[string]bool{}
	for {
		df, ds := full.next(t), short.next(t)
		if (df == nil) != (ds == nil) {
			t.Fatalf("%s: one episode ended before the other", base.ID)
		}
		if df == nil {
			break
		}
		if ds.Step%16 != 0 { // the schema is slow: a sample of the steps
		} else if b, err := validate(sch.decision, ds); err != nil {
			t.Fatalf("%s step %d: the summary payload fails the schema: %v\n%s", base.ID, ds.Step, err, clip(b))
		}
		for id, vf := range df.ActiveAgents {
			vs := ds.ActiveAgents[id]
			if vs == nil || vs.Observation.Detail != coord.DetailSummary {
				t.Fatalf("%s step %d: %s has no summary view", base.ID, df.Step, id)
			}
			roles[vf.Role] = true
			bf, _ := json.Marshal(vf)
			bs, _ := json.Marshal(vs)
			fullBytes += len(bf)
			shortBytes += len(bs)
			want := totalsOf(vf.Observation)
			if got := vs.Observation; !sameObservation(got, want) {
				t.Fatalf("%s step %d: %s summary\n%+v\nwant the totals of the full view\n%+v", base.ID, df.Step, id, got, want)
			}
			vs2, vf2 := *vs, *vf
			vs2.Observation, vf2.Observation = coord.Observation{}, coord.Observation{}
			b1, _ := json.Marshal(vf2)
			b2, _ := json.Marshal(vs2)
			if string(b1) != string(b2) {
				t.Fatalf("%s step %d: %s: beyond the observation the views differ:\n%s\n%s", base.ID, df.Step, id, b1, b2)
			}
		}
		full.apply(t, df)
		short.apply(t, ds)
	}
	wantRoles := 2 // the plant and the roles below it
	if base.RoutingAuthorityMode == coord.RoutingCentralized {
		wantRoles = 1
	}
	if len(roles) < wantRoles || shortBytes >= fullBytes {
		t.Errorf("%s: roles %v, %d bytes of summary payloads against %d", base.ID, roles, shortBytes, fullBytes)
	}
	t.Logf("%s: payloads %d bytes full, %d summary (%.1f%% saved)", base.ID, fullBytes, shortBytes, 100*float64(fullBytes-shortBytes)/float64(fullBytes))
}

// totalsOf is the summary of a full observation, computed here.
func totalsOf(o coord.Observation) coord.Observation {
	s := coord.Observation{Detail: coord.DetailSummary, HeadroomKW: o.HeadroomKW}
	round := func(x float64) float64 { return math.Round(x*100) / 100 }
	switch {
	case o.Plant != nil:
		p := *o.Plant
		t := coord.AreaTotals{Areas: len(p.Areas)}
		for _, a := range p.Areas {
			t.Cells, t.Machines, t.Busy, t.Down = t.Cells+a.Cells, t.Machines+a.Machines, t.Busy+a.Busy, t.Down+a.Down
			t.Blocked, t.FreeSlots, t.Backlog = t.Blocked+a.Blocked, t.FreeSlots+a.FreeSlots, t.Backlog+a.Backlog
		}
		t.Backlog = round(t.Backlog)
		p.Areas, p.AreaTotals = nil, t
		s.Plant = &p
	case o.Area != nil:
		a := *o.Area
		t := coord.CellTotals{Cells: len(a.Cells)}
		for _, c := range a.Cells {
			t.Machines, t.Idle, t.Busy, t.Blocked = t.Machines+c.Machines, t.Idle+c.Idle, t.Busy+c.Busy, t.Blocked+c.Blocked
			t.Down, t.Waiting, t.FreeSlots, t.Backlog = t.Down+c.Down, t.Waiting+c.Waiting, t.FreeSlots+c.FreeSlots, t.Backlog+c.Backlog
		}
		t.Backlog = round(t.Backlog)
		a.Cells, a.CellTotals = nil, t
		s.Area = &a
	case o.Cell != nil:
		c := *o.Cell
		by := map[string]int{}
		for _, m := range c.Machines {
			by[m.State]++
		}
		c.Machines = nil
		c.MachineStates = coord.MachineCounts{Idle: by["idle"], Setup: by["setup"], Busy: by["busy"], Blocked: by["blocked"], Down: by["down"]}
		s.Cell = &c
	}
	return s
}

// sameObservation compares observations as their JSON texts (an empty
// list and none encode alike).
func sameObservation(a, b coord.Observation) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestKnobPayloadsRejectedWhenMalformed: the schema's summary and
// invitation variants constrain too.
func TestKnobPayloadsRejectedWhenMalformed(t *testing.T) {
	sch := loadSchemas(t)
	plant := func(m map[string]any) map[string]any { return obj(m, "active_agents", "plant") }
	cell := func(m map[string]any) map[string]any { return obj(m, "active_agents", "cell:C08") }
	summaryRelease := mutate(t, validRelease, func(m map[string]any) {
		o := obj(plant(m), "observation")
		o["detail"] = "summary"
		p := obj(o, "plant")
		delete(p, "areas")
		p["area_totals"] = map[string]any{"areas": 1, "cells": 2, "machines": 3, "busy": 0, "down": 0, "blocked": 0, "free_slots": 6, "backlog": 0}
	})
	invitedBid := mutate(t, validBid, func(m map[string]any) {
		o := obj(cell(m), "observation")
		o["detail"] = "summary"
		c := obj(o, "cell")
		delete(c, "machines")
		c["machine_states"] = map[string]any{"idle": 1, "busy": 1}
		obj(cell(m), "context", "contract")["invitation"] = map[string]any{"k": 1, "ranking": []any{
			map[string]any{"cell": "C08", "invited": true, "free_slots": 3, "score": 14},
			map[string]any{"cell": "C09", "invited": false, "declined": true, "free_slots": 0, "score": 20.5},
		}}
	})
	asCommit := func(m map[string]any) {
		c := cell(m)
		c["kind"], c["context"].(map[string]any)["trigger"] = "commit", "award"
		c["options"] = []any{map[string]any{"index": 0, "action": "accept"}, map[string]any{"index": 1, "action": "reject"}}
		c["legal_actions"], c["action_mask"] = []any{0, 1}, []any{true, true}
	}
	summaryCommit := mutate(t, string(invitedBid), func(m map[string]any) {
		asCommit(m)
		delete(obj(cell(m), "context", "contract"), "invitation")
	})
	for name, b := range map[string][]byte{"summary release": summaryRelease, "summary bid with an invitation": invitedBid,
		"summary commit": summaryCommit} {
		if err := validateJSON(sch.decision, b); err != nil {
			t.Fatalf("hand-written valid %s payload rejected: %v\n%s", name, err, b)
		}
	}
	for name, b := range map[string][]byte{
		"summary with the list": mutate(t, string(summaryRelease), func(m map[string]any) {
			obj(plant(m), "observation", "plant")["areas"] = obj(plant(mutateMap(t, validRelease)), "observation", "plant")["areas"]
		}),
		"summary without totals": mutate(t, string(summaryRelease), func(m map[string]any) {
			delete(obj(plant(m), "observation", "plant"), "area_totals")
		}),
		"totals in a full view": mutate(t, string(summaryRelease), func(m map[string]any) {
			delete(obj(plant(m), "observation"), "detail")
		}),
		"unknown detail": mutate(t, string(summaryRelease), func(m map[string]any) { obj(plant(m), "observation")["detail"] = "terse" }),
		"machine counts with a zero": mutate(t, string(invitedBid), func(m map[string]any) {
			obj(cell(m), "observation", "cell", "machine_states")["down"] = 0
		}),
		"machine list in a summary": mutate(t, string(invitedBid), func(m map[string]any) {
			obj(cell(m), "observation", "cell")["machines"] = []any{map[string]any{"state": "idle"}}
		}),
		"invitation without k": mutate(t, string(invitedBid), func(m map[string]any) {
			delete(obj(cell(m), "context", "contract", "invitation"), "k")
		}),
		"invitee without a score": mutate(t, string(invitedBid), func(m map[string]any) {
			delete(obj(cell(m), "context", "contract", "invitation")["ranking"].([]any)[0].(map[string]any), "score")
		}),
		"declined false": mutate(t, string(invitedBid), func(m map[string]any) {
			obj(cell(m), "context", "contract", "invitation")["ranking"].([]any)[0].(map[string]any)["declined"] = false
		}),
		"an invitation outside a bid": mutate(t, string(invitedBid), asCommit),
	} {
		if err := validateJSON(sch.decision, b); err == nil {
			t.Errorf("%s: accepted by the schema\n%s", name, b)
		}
	}
}

// knobParadigm is a shipped example of the switches that
// TestPayloadSchema adds to its episodes, with the one controller that
// plays it there (TestSummaryViewsAreTotals validates summary views of
// every paradigm besides).
type knobParadigm struct {
	mode coord.AuthorityMode
	ctl  string
}

func knobParadigms(t *testing.T) map[string]knobParadigm {
	t.Helper()
	out := map[string]knobParadigm{}
	for _, f := range [][2]string{{"cnp_k2", "random"}, {"my_hybrid_k1", "rule"}, {"holonic_summary", "random"}, {"adaptive_lean", "rule"}} {
		m, err := new(coord.Paradigms).AddFile("../../examples/paradigms/" + f[0] + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		out[m.ID] = knobParadigm{m, f[1]}
	}
	return out
}

// knobVariant names the payload variant a view exercises, for the
// coverage of TestPayloadSchema ("full" when none).
func knobVariant(v *coord.View) string {
	switch {
	case v.Context.Contract != nil && v.Context.Contract.Invitation != nil:
		return "invitation/" + v.Kind
	case v.Observation.Detail != "":
		return "summary/" + v.Role
	}
	return "full"
}

// invitationInvariants checks a bid view's cut (nil: none) against the
// round's n bidding agents: the view's cell is invited, the first
// min(k, candidates) of the ranking are invited and no other, every
// candidate is listed once, and the ranking follows the rule.
func invitationInvariants(id string, inv *coord.Invitation, n int) error {
	if inv == nil {
		return nil
	}
	seen := map[string]bool{}
	invited := 0
	for i, r := range inv.Ranking {
		if seen[r.Cell] {
			return fmt.Errorf("%s: %s ranked twice", id, r.Cell)
		}
		seen[r.Cell] = true
		if r.Invited != (i < inv.K) {
			return fmt.Errorf("%s: %s ranked %d with k %d, invited %v", id, r.Cell, i+1, inv.K, r.Invited)
		}
		if r.Invited {
			invited++
		}
		if i > 0 {
			p := inv.Ranking[i-1]
			if p.Declined && !r.Declined || p.Declined == r.Declined && p.FreeSlots <= 0 && r.FreeSlots > 0 ||
				p.Declined == r.Declined && (p.FreeSlots > 0) == (r.FreeSlots > 0) && p.Score > r.Score {
				return fmt.Errorf("%s: %+v ranked before %+v", id, p, r)
			}
		}
	}
	if !seen[strings.TrimPrefix(id, "cell:")] || invited != n {
		return fmt.Errorf("%s bids with %d agents; the invitation invites %d (%+v)", id, n, invited, inv.Ranking)
	}
	return nil
}

// TestDocKnobExamples: the paradigm files that docs/paradigms.md shows
// after my_hybrid and adaptive are the shipped examples of the same id.
func TestDocKnobExamples(t *testing.T) {
	files := fenced(t, "../../docs/paradigms.md", "yaml")
	if len(files) < 4 {
		t.Fatalf("docs/paradigms.md: want the communication switches' examples after my_hybrid and adaptive, found %d yaml blocks", len(files))
	}
	for i, text := range files[2:] {
		path := filepath.Join(t.TempDir(), "doc.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := new(coord.Paradigms).AddFile(path)
		if err != nil {
			t.Fatalf("docs/paradigms.md yaml block %d: %v", i+3, err)
		}
		shipped, err := new(coord.Paradigms).AddFile("../../examples/paradigms/" + doc.ID + ".yaml")
		if err != nil || !doc.Equal(shipped) {
			t.Errorf("docs/paradigms.md yaml block %d (%s) is not examples/paradigms/%s.yaml: %v", i+3, doc.ID, doc.ID, err)
		}
	}
}
