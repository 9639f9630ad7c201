package coord

import (
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/factory"
)

func engine(t *testing.T, ref string, seed uint64) *factory.Engine {
	t.Helper()
	in, err := factory.Resolve(ref)
	if err != nil {
		t.Fatal(err)
	}
	return factory.NewEngine(factory.Compile(in), seed)
}

func TestParadigms(t *testing.T) {
	var set Paradigms // the zero set: the built-ins
	m, err := set.Lookup("centralized")
	if err != nil || m != Centralized() {
		t.Fatalf("centralized: %+v %v", m, err)
	}
	if _, err := set.Lookup("nope"); err == nil || err.Error() != `unknown paradigm "nope" (have: [centralized heterarchical_cnp hierarchical holonic_hybrid])` {
		t.Errorf("unknown mode error should list the known ones: %v", err)
	}
	if err := set.Add(Centralized()); err == nil {
		t.Error("a built-in's id taken again")
	}
	bad := []struct {
		m    AuthorityMode
		want string
	}{
		{AuthorityMode{RoutingAuthorityMode: "centralized", CellContractActions: "accept_only"}, "mode_id"},
		{AuthorityMode{ID: "x", RoutingAuthorityMode: "anarchy", CellContractActions: "accept_only"}, "routing_authority_mode"},
		{AuthorityMode{ID: "x", RoutingAuthorityMode: "centralized", CellContractActions: "maybe"}, "cell_contract_actions"},
		{AuthorityMode{ID: "x", RoutingAuthorityMode: "centralized", CellContractActions: "accept_only", MediatedBidRoundEnabled: true}, "heterarchical_cnp"},
		{AuthorityMode{ID: "x", RoutingAuthorityMode: "heterarchical_cnp", CellContractActions: "accept_reject"}, "needs mediated_bid_round_enabled"},
		{AuthorityMode{ID: "x", RoutingAuthorityMode: "centralized", CellContractActions: "accept_reject", AreaLocalRerouteEnabled: true}, "needs an area level"},
		{AuthorityMode{ID: "x", RoutingAuthorityMode: "hierarchical", CellContractActions: "accept_only", AreaLocalRerouteEnabled: true}, "nothing to recover from"},
	}
	for _, b := range bad {
		err := set.Add(b.m)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want it to mention %q", b.m, err, b.want)
		}
	}
	for _, m := range Builtins() {
		if err := m.Validate(); err != nil {
			t.Errorf("built-in: %v", err)
		}
	}
	// Custom paradigms follow the built-ins, by id, in this set only.
	for _, id := range []string{"zeta", "alpha"} {
		m := Hierarchical()
		m.ID = id
		if err := set.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := set.Add(AuthorityMode{ID: "alpha", RoutingAuthorityMode: "centralized", CellContractActions: "accept_only"}); err == nil {
		t.Error("a custom id taken again")
	}
	want := "centralized,hierarchical,heterarchical_cnp,holonic_hybrid,alpha,zeta"
	if got := strings.Join(set.IDs(), ","); got != want {
		t.Errorf("ids %s, want %s", got, want)
	}
	var other *Paradigms // nil: the built-ins too
	if _, err := other.Lookup("alpha"); err == nil || len(other.List()) != 4 || len(new(Paradigms).List()) != 4 {
		t.Error("a custom paradigm leaked out of its set")
	}
	// The built-ins are copies: changing one changes nothing.
	b := Builtins()
	b[0].PlantRerouteRequired = false
	if !Centralized().PlantRerouteRequired || !Builtins()[0].PlantRerouteRequired {
		t.Error("a caller changed a built-in")
	}
}

func TestModeFile(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/hybrid.yaml"
	os.WriteFile(good, []byte("mode_id: test_hybrid\nrouting_authority_mode: holonic_hybrid\ncell_contract_actions: accept_reject\n"+
		"area_local_reroute_enabled: true\nplant_reroute_required: false\nmediated_bid_round_enabled: true\n"), 0o644)
	var set Paradigms
	m, err := set.AddFile(good)
	if err != nil || !m.MediatedBidRoundEnabled || m.RoutingAuthorityMode != RoutingHolonic {
		t.Fatalf("%+v %v", m, err)
	}
	if _, err := set.AddFile(good); err != nil {
		t.Errorf("loading the same file twice: %v", err)
	}
	if got, err := set.Lookup("test_hybrid"); err != nil || got != m {
		t.Errorf("not added: %v", err)
	}
	for name, text := range map[string]string{
		"typo.yaml":    "mode_id: t1\nrouting_authority_mod: centralized\n",
		"invalid.yaml": "mode_id: t2\nrouting_authority_mode: heterarchical_cnp\ncell_contract_actions: accept_only\n",
		"clash.yaml":   "mode_id: test_hybrid\nrouting_authority_mode: centralized\ncell_contract_actions: accept_only\n",
		"builtin.yaml": "mode_id: centralized\nrouting_authority_mode: centralized\ncell_contract_actions: accept_only\n",
		"big.yaml":     "mode_id: big\ndescription: " + strings.Repeat("x", maxParadigmFile) + "\n",
	} {
		os.WriteFile(dir+"/"+name, []byte(text), 0o644)
		if _, err := set.AddFile(dir + "/" + name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v should name the file", name, err)
		}
	}
	// A user mode runs: a holonic hybrid with a bid round inside the area.
	e := engine(t, "A5C12-1", 3)
	in, err := NewInterpreter(e, m)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for e.Advance() {
		d := in.Next()
		actions := map[string]int{}
		for id, v := range d.ActiveAgents {
			kinds[v.Role+"/"+v.Kind] = true
			actions[id] = SafeAction(v)
		}
		if _, err := in.Apply(d, actions, SourceBuiltin, nil); err != nil {
			t.Fatal(err)
		}
	}
	if e.Status() != factory.Done {
		t.Errorf("status %s", e.Status())
	}
	for _, k := range []string{"plant/select_area", "cell/bid", "area/award", "cell/commit"} {
		if !kinds[k] {
			t.Errorf("the user mode never activated %s (saw %v)", k, kinds)
		}
	}
}

// switcher is a dynamic paradigm: hierarchical for urgent items,
// heterarchical otherwise (a ModeSelector over visible state).
type switcher struct{ used map[string]int }

func (s *switcher) ModeFor(w *WorkItem, _ *PlantObservation) AuthorityMode {
	if w.Slack < 200 {
		s.used[Hierarchical().ID]++
		return Hierarchical()
	}
	s.used[HeterarchicalCNP().ID]++
	return HeterarchicalCNP()
}

func TestDynamicModeSelector(t *testing.T) {
	e := engine(t, "A5C12-1", 2)
	sw := &switcher{used: map[string]int{}}
	in, err := NewInterpreter(e, sw)
	if err != nil {
		t.Fatal(err)
	}
	for e.Advance() {
		d := in.Next()
		actions := map[string]int{}
		for id, v := range d.ActiveAgents {
			actions[id] = SafeAction(v)
		}
		if _, err := in.Apply(d, actions, SourceBuiltin, nil); err != nil {
			t.Fatal(err)
		}
	}
	if e.Status() != factory.Done || sw.used["hierarchical"] == 0 || sw.used["heterarchical_cnp"] == 0 {
		t.Errorf("status %s, modes used %v", e.Status(), sw.used)
	}
}

func TestMultiAgentStepFallbacks(t *testing.T) {
	e := engine(t, "A5C12-1", 1)
	in, _ := NewInterpreter(e, HeterarchicalCNP())
	for e.Advance() {
		d := in.Next()
		if len(d.ActiveAgents) < 3 {
			actions := map[string]int{}
			for id, v := range d.ActiveAgents {
				actions[id] = SafeAction(v)
			}
			in.Apply(d, actions, SourceBuiltin, nil)
			continue
		}
		// A bid step with several cells: one answers legally, one out of
		// range, one not at all, and an inactive agent answers too.
		ids := slices.Sorted(maps.Keys(d.ActiveAgents))
		actions := map[string]int{ids[0]: 0, ids[1]: 42, "cell:NOPE": 1}
		audits, err := in.Apply(d, actions, SourceExternal, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(audits) != len(ids) {
			t.Fatalf("%d audits for %d active agents", len(audits), len(ids))
		}
		if audits[0].Source != SourceExternal || audits[1].Source != SourceFallback || audits[1].Reason != "illegal action index 42" ||
			audits[2].Source != SourceFallback || audits[2].Reason != "no action for this agent" {
			t.Errorf("audits %+v", audits)
		}
		total := 0
		for _, a := range audits {
			total += a.Messages
		}
		if total != 2*len(ids) { // one announce and one bid or decline per cell
			t.Errorf("bid step audited %d messages for %d cells", total, len(ids))
		}
		return
	}
	t.Fatal("no multi-agent bid step")
}

// TestPayloadsAreLegalAndLocal walks whole episodes and checks every
// payload's contract: masks agree with legal actions, routing options are
// exactly the capable cells, release options never exceed the bound.
func TestPayloadsAreLegalAndLocal(t *testing.T) {
	for _, ref := range factory.BuiltinNames() {
		e := engine(t, ref, 1)
		in, err := NewInterpreter(e, Centralized())
		if err != nil {
			t.Fatal(err)
		}
		steps := 0
		for e.Advance() {
			d := in.Next()
			if d == nil {
				t.Fatalf("%s: engine waits but no decision", ref)
			}
			if d.Version != PayloadVersion || d.Step != steps || len(d.ActiveAgents) != 1 {
				t.Fatalf("%s: bad decision header %+v", ref, d)
			}
			v := d.ActiveAgents["plant"]
			if v == nil || v.Role != RolePlant || v.Observation.Plant == nil || len(v.Observation.Plant.Areas) != len(e.P.Areas) {
				t.Fatalf("%s: centralized activates the plant only, got %v", ref, d.ActiveAgents)
			}
			if len(v.LegalActions) == 0 || len(v.ActionMask) != len(v.Options) {
				t.Fatalf("%s step %d: empty or inconsistent action set", ref, steps)
			}
			for i, o := range v.Options {
				if o.Index != i || !v.ActionMask[i] {
					t.Fatalf("%s step %d: option %d index %d mask %v", ref, steps, i, o.Index, v.ActionMask[i])
				}
			}
			switch v.Kind {
			case KindRelease:
				jobs := 0
				for _, o := range v.Options {
					if o.Job != nil {
						jobs++
					}
				}
				if jobs == 0 || jobs > MaxReleaseOptions {
					t.Fatalf("%s step %d: %d release options", ref, steps, jobs)
				}
			case KindSelectCell:
				w := v.Context.WorkItem
				if w == nil {
					t.Fatalf("%s step %d: routing without a work item", ref, steps)
				}
				capable := 0
				for c := range e.P.Cells {
					if e.P.Cells[c].Factor[indexOf(e.P.Ops, w.OpType)] > 0 {
						capable++
					}
				}
				if capable != len(v.Options) {
					t.Fatalf("%s step %d: %d options for %d capable cells", ref, steps, len(v.Options), capable)
				}
			}
			if _, err := in.Apply(d, map[string]int{"plant": SafeAction(v)}, SourceBuiltin, nil); err != nil {
				t.Fatal(err)
			}
			steps++
		}
		if in.Steps() != steps || steps == 0 {
			t.Errorf("%s: Steps() = %d, executed %d", ref, in.Steps(), steps)
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestIllegalRepliesFallBackAndAreAudited(t *testing.T) {
	e := engine(t, "A5C12-1", 1)
	in, _ := NewInterpreter(e, Centralized())
	cases := []struct {
		actions map[string]int
		err     error
		reason  string
	}{
		{map[string]int{"plant": 99}, nil, "illegal action index 99"},
		{map[string]int{"plant": -1}, nil, "illegal action index -1"},
		{map[string]int{}, nil, "no action for this agent"},
		{map[string]int{"plant": 0}, errors.New("model returned prose"), "controller error: model returned prose"},
	}
	for _, tc := range cases {
		if !e.Advance() {
			t.Fatal("episode ended early")
		}
		d := in.Next()
		v := d.ActiveAgents["plant"]
		audits, err := in.Apply(d, tc.actions, SourceLLM, tc.err)
		if err != nil {
			t.Fatal(err)
		}
		a := audits[0]
		if a.Source != SourceFallback || a.Reason != tc.reason || a.Action != SafeAction(v) || a.Payload != v {
			t.Errorf("audit %+v, want fallback %q action %d", a, tc.reason, SafeAction(v))
		}
		if want, ok := tc.actions["plant"]; ok && tc.err == nil && (a.Requested == nil || *a.Requested != want) {
			t.Errorf("requested %v, want %d", a.Requested, want)
		}
		// The agent is told on its next activation.
		if !e.Advance() {
			t.Fatal("episode ended early")
		}
		if fb := in.Next().ActiveAgents["plant"].Context.Feedback; !strings.Contains(fb, tc.reason) {
			t.Errorf("feedback %q lacks %q", fb, tc.reason)
		}
	}
	// A legal reply is committed as given, under the controller's source.
	d := in.Next()
	audits, _ := in.Apply(d, map[string]int{"plant": d.ActiveAgents["plant"].LegalActions[0]}, SourceLLM, nil)
	if audits[0].Source != SourceLLM || audits[0].Reason != "" {
		t.Errorf("legal reply audited as %+v", audits[0])
	}
}

// TestSafeActionIsWeakButSafe pins the fallback's rule kind by kind: the
// first legal option in payload order among the safe ones, whatever the
// figures of quality say (a faster, emptier or more urgent option later
// in the list is passed over), and never a full cell, an over-cap cell,
// a deferral under the cap or a refusal when a safe option is offered.
func TestSafeActionIsWeakButSafe(t *testing.T) {
	cells := func(kind string, headroom float64, opts ...Option) *View {
		v := &View{Kind: kind, Observation: Observation{HeadroomKW: headroom}, Options: opts}
		for i := range opts {
			v.LegalActions = append(v.LegalActions, i)
		}
		return v
	}
	cell := func(id string, free int, proc, backlog, kw float64) Option {
		return Option{Action: ActAssign, Cell: &CellOption{Cell: id, FreeSlots: free, ProcTime: proc, Backlog: backlog, BusyKW: kw}}
	}
	bidView := func(free int) *View {
		v := cells(KindBid, 5, Option{Action: ActBid, Bid: "high"}, Option{Action: ActBid, Bid: "medium"},
			Option{Action: ActBid, Bid: "low"}, Option{Action: ActDecline})
		v.Observation.Cell = &CellObservation{FreeSlots: free}
		return v
	}
	cases := []struct {
		name string
		v    *View
		want int
	}{
		{"the first cell with room, not the fastest nor the emptiest", cells(KindSelectCell, 10,
			cell("full-fast", 0, 1, 0, 1), cell("slow", 2, 50, 30, 1), cell("quick", 1, 20, 0, 1)), 1},
		{"a cell within the power headroom first", cells(KindAward, 2,
			cell("hungry", 1, 1, 0, 7.5), cell("frugal", 1, 9, 9, 1.5)), 1},
		{"over the cap everywhere: the first cell with room", cells(KindPlantFallback, -3,
			cell("full", 0, 1, 0, 1), cell("a", 1, 9, 0, 4), cell("b", 1, 1, 0, 1), Option{Action: ActDecline}), 1},
		{"all full: the first cell, not escalate", cells(KindReroute, 10,
			cell("x", 0, 9, 9, 1), cell("y", 0, 1, 0, 1), Option{Action: ActEscalate}), 0},
		{"no cell offered: escalate", cells(KindSelectCell, 10, Option{Action: ActEscalate}), 0},
		{"the first area with room", cells(KindSelectArea, 10,
			Option{Action: ActAllocate, Area: &AreaOption{Area: "A1"}},
			Option{Action: ActAllocate, Area: &AreaOption{Area: "A2", FreeSlots: 1, MinProcTime: 90}},
			Option{Action: ActAllocate, Area: &AreaOption{Area: "A3", FreeSlots: 5, MinProcTime: 1}}), 1},
		{"release the oldest offered job, not the most urgent; never defer under the cap", cells(KindRelease, 1,
			Option{Action: ActRelease, Job: &JobOption{Job: 4, Due: 90}},
			Option{Action: ActRelease, Job: &JobOption{Job: 7, Due: 40}}, Option{Action: ActDefer}), 0},
		{"over the cap: defer", cells(KindRelease, -1,
			Option{Action: ActRelease, Job: &JobOption{Job: 4, Due: 90}}, Option{Action: ActDefer}), 1},
		{"over the cap, deferring illegal: release", cells(KindRelease, -1,
			Option{Action: ActRelease, Job: &JobOption{Job: 4, Due: 90}}), 0},
		{"bid low with room", bidView(1), 2},
		{"decline when full", bidView(0), 3},
		{"accept the contract", cells(KindCommit, 0, Option{Action: ActReject}, Option{Action: ActAccept}), 1},
		{"select_mode: the first legal", cells(KindSelectMode, 0, Option{Action: ActMode}, Option{Action: ActMode}), 0},
	}
	for _, tc := range cases {
		if got := SafeAction(tc.v); got != tc.want {
			t.Errorf("%s: SafeAction = %d, want %d", tc.name, got, tc.want)
		}
	}
	// Only legal options are taken, and a view with none gets -1.
	v := cells(KindSelectCell, 10, cell("a", 1, 1, 0, 1), cell("b", 1, 1, 0, 1))
	v.LegalActions = []int{1}
	if got := SafeAction(v); got != 1 {
		t.Errorf("SafeAction = %d with only option 1 legal", got)
	}
	if got := SafeAction(&View{Kind: KindCommit}); got != -1 {
		t.Errorf("SafeAction = %d with no legal option, want -1", got)
	}
}

func TestMessagesCounted(t *testing.T) {
	e := engine(t, "A5C12-1", 2)
	in, _ := NewInterpreter(e, Centralized())
	routes := 0
	for e.Advance() {
		d := in.Next()
		v := d.ActiveAgents["plant"]
		if v.Kind == KindSelectCell {
			routes++
		}
		audits, err := in.Apply(d, map[string]int{"plant": SafeAction(v)}, SourceBuiltin, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{KindSelectCell: 2, KindRelease: 0}[v.Kind]; audits[0].Messages != want {
			t.Fatalf("%s caused %d messages, want %d", v.Kind, audits[0].Messages, want)
		}
	}
	if len(in.Messages) != 2*routes || routes == 0 {
		t.Errorf("%d messages for %d routing decisions", len(in.Messages), routes)
	}
	m := in.Messages[0]
	if m.Type != "assign" || m.Sender != "plant" || !strings.HasPrefix(m.Receiver, "cell:") {
		t.Errorf("first message %+v", m)
	}
}
