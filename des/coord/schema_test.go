package coord_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

// schemaPath is the published JSON Schema of the payload.
const schemaPath = "../../docs/payload.schema.json"

// schemas are the compiled payload schema and the $defs a run emits.
type schemas struct {
	decision, reply, audit, message *jsonschema.Schema
}

var (
	schemaOnce sync.Once
	schemaSet  schemas
	schemaErr  error
)

// loadSchemas compiles docs/payload.schema.json (once per test binary).
func loadSchemas(t *testing.T) schemas {
	t.Helper()
	schemaOnce.Do(func() { schemaSet, schemaErr = compileSchemas() })
	if schemaErr != nil {
		t.Fatal(schemaErr)
	}
	return schemaSet
}

func compileSchemas() (schemas, error) {
	var s schemas
	f, err := os.Open(schemaPath)
	if err != nil {
		return s, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return s, fmt.Errorf("%s: %v", schemaPath, err)
	}
	obj, _ := doc.(map[string]any)
	id, _ := obj["$id"].(string)
	if !strings.Contains(id, coord.PayloadVersion) {
		return s, fmt.Errorf("%s: $id %q does not name %s", schemaPath, id, coord.PayloadVersion)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(id, doc); err != nil {
		return s, err
	}
	for _, x := range []struct {
		dst **jsonschema.Schema
		loc string
	}{{&s.decision, id}, {&s.reply, id + "#/$defs/Reply"}, {&s.audit, id + "#/$defs/Audit"}, {&s.message, id + "#/$defs/Message"}} {
		if *x.dst, err = c.Compile(x.loc); err != nil {
			return s, fmt.Errorf("compile %s: %v", x.loc, err)
		}
	}
	return s, nil
}

// validate encodes v as the runner does and validates the JSON text.
func validate(sch *jsonschema.Schema, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, validateJSON(sch, b)
}

func validateJSON(sch *jsonschema.Schema, b []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func clip(b []byte) string {
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// erratic wraps a controller and misbehaves now and then (a failed call,
// a missing agent, an illegal index), so that fallback audits and
// feedback are exercised too.
type erratic struct {
	inner coord.Controller
	n     int
}

func (e *erratic) Name() string         { return "erratic-" + e.inner.Name() }
func (e *erratic) Source() coord.Source { return coord.SourceExternal }
func (e *erratic) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	e.n++
	acts, err := e.inner.Act(ctx, d)
	first := slices.Sorted(maps.Keys(d.ActiveAgents))[0]
	switch {
	case e.n%53 == 0:
		return nil, errors.New("model timed out")
	case e.n%11 == 0:
		delete(acts, first)
	case e.n%7 == 0:
		acts[first] = 99
	case e.n%17 == 0:
		acts[first] = -1
	}
	return acts, err
}

// loadSwitch is the dynamic paradigm of docs/paradigms.md: the plant
// routes centrally while the shop is lightly loaded, and hands each new
// work item to the area holarchy (local recovery) once more than a
// threshold share of the machines is busy, blocked or down.
type loadSwitch struct {
	calm, loaded coord.AuthorityMode
	threshold    float64
}

func (s loadSwitch) ModeFor(item *coord.WorkItem, p *coord.PlantObservation) coord.AuthorityMode {
	engaged, machines := 0, 0
	for _, a := range p.Areas {
		engaged += a.Busy + a.Blocked + a.Down
		machines += a.Machines
	}
	if float64(engaged) > s.threshold*float64(machines) {
		return s.loaded
	}
	return s.calm
}

// myHybrid is the seed's F.3 example: holonic routing with a bid round
// inside the chosen area and no plant reselection.
var myHybrid = coord.AuthorityMode{
	ID: "my_hybrid", RoutingAuthorityMode: coord.RoutingHolonic, CellContractActions: coord.AcceptReject,
	AreaLocalRerouteEnabled: true, PlantRerouteRequired: false, MediatedBidRoundEnabled: true,
}

// coverage records what the validated episodes exercised.
type coverage struct {
	mu       sync.Mutex
	episodes int            // episodes run (a -run filter may skip some)
	kinds    map[string]int // role/kind
	triggers map[string]int // kind/trigger
	messages map[string]int // type (+forced)
	sources  map[coord.Source]int
}

func (c *coverage) add(m map[string]int, k string) {
	c.mu.Lock()
	m[k]++
	c.mu.Unlock()
}

// TestPayloadSchema drives real episodes of every built-in paradigm on two
// reported instances with the rule and random controllers (plus, on
// A5C12-1, the seed's my_hybrid, a dynamic paradigm and a misbehaving
// controller), and checks every decision payload, the audits
// (decisions.jsonl lines) and every protocol message against
// docs/payload.schema.json and the invariants a schema cannot state.
func TestPayloadSchema(t *testing.T) {
	sch := loadSchemas(t)
	modes := map[string]coord.ModeSelector{}
	for _, m := range coord.Builtins() {
		modes[m.ID] = m
	}
	modes[myHybrid.ID] = myHybrid
	modes["dynamic"] = loadSwitch{calm: coord.Centralized(), loaded: coord.HolonicHybrid(), threshold: 0.5}
	adaptive, err := new(coord.Paradigms).AddFile("../../examples/paradigms/adaptive.yaml")
	if err != nil {
		t.Fatal(err)
	}
	modes[adaptive.ID] = adaptive // payloads with an authority
	agentMode, err := new(coord.Paradigms).AddFile("../../examples/paradigms/adaptive_agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	modes[agentMode.ID] = agentMode // select_mode views of the mode_selector
	knobs := knobParadigms(t)       // summary views, invitations (comm_test.go): one controller each
	for _, k := range knobs {
		modes[k.mode.ID] = k.mode
	}
	cov := &coverage{kinds: map[string]int{}, triggers: map[string]int{}, messages: map[string]int{}, sources: map[coord.Source]int{}}
	planned := 0
	t.Run("episodes", func(t *testing.T) {
		for _, ref := range []string{"A5C12-1", "A3C9-1"} {
			inst, err := factory.Resolve(ref)
			if err != nil {
				t.Fatal(err)
			}
			p := factory.Compile(inst)
			seed := inst.Seeds.Test[0]
			for _, id := range slices.Sorted(maps.Keys(modes)) {
				for _, ctl := range []string{"rule", "random", "erratic"} {
					// The extra paradigms and the misbehaving controller run
					// on one instance: their coverage does not depend on it.
					builtin := slices.ContainsFunc(coord.Builtins(), func(m coord.AuthorityMode) bool { return m.ID == id })
					if ref != "A5C12-1" && (!builtin || ctl == "erratic") {
						continue
					}
					if k, ok := knobs[id]; ok && k.ctl != ctl {
						continue
					}
					planned++
					t.Run(ref+"/"+id+"/"+ctl, func(t *testing.T) {
						t.Parallel()
						cov.mu.Lock()
						cov.episodes++
						cov.mu.Unlock()
						var c coord.Controller
						switch ctl {
						case "rule":
							c = policy.Rule{}
						case "random":
							c, _ = policy.New("random", seed)
						case "erratic":
							r, _ := policy.New("random", seed+1)
							c = &erratic{inner: r}
						}
						checkEpisode(t, sch, cov, p, seed, modes[id], c)
					})
				}
			}
		}
	})
	t.Logf("kinds: %v", cov.kinds)
	t.Logf("triggers: %v", cov.triggers)
	t.Logf("messages: %v", cov.messages)
	t.Logf("sources: %v", cov.sources)
	if cov.episodes < planned {
		t.Logf("%d of %d episodes run: coverage not checked", cov.episodes, planned)
		return
	}
	// The runs must exercise every decision kind, every protocol trigger
	// and every message type, or the schema is not fully tested.
	for _, k := range []string{"plant/release", "plant/select_area", "plant/select_cell", "plant/award",
		"area/select_cell", "area/award", "area/reroute", "cell/bid", "cell/commit", "selector/select_mode",
		"summary/plant", "summary/area", "summary/cell", "invitation/bid"} {
		if cov.kinds[k] == 0 {
			t.Errorf("no %s decision was validated", k)
		}
	}
	var trig []string
	for k := range cov.triggers {
		_, tr, _ := strings.Cut(k, "/")
		trig = append(trig, tr)
	}
	for _, tr := range []string{"work_item_ready", "allocation", "announcement", "bids", "rejection", "reannouncement",
		"escalation", "award", "assignment", "arrival", "job_complete", "defer_expired"} {
		if !slices.Contains(trig, tr) {
			t.Errorf("no decision with trigger %s was validated", tr)
		}
	}
	for _, m := range []string{"announce", "bid", "decline", "award", "allocate", "assign", "accept", "reject",
		"reroute", "escalate", "report", "assign+forced", "accept+forced"} {
		if cov.messages[m] == 0 {
			t.Errorf("no %s message was validated", m)
		}
	}
	if cov.sources[coord.SourceFallback] == 0 {
		t.Error("no fallback audit was validated")
	}
}

// checkEpisode runs one episode, validating as it goes.
func checkEpisode(t *testing.T, sch schemas, cov *coverage, p *factory.Plant, seed uint64, sel coord.ModeSelector, c coord.Controller) {
	eng := factory.NewEngine(p, seed)
	in, err := coord.NewInterpreter(eng, sel)
	if err != nil {
		t.Fatal(err)
	}
	limits := p.Inst.Limits
	last, idle := eng.Progress(), 0
	for eng.Advance() {
		in.Observe(eng.Records()) // recent_events
		d := in.Next()
		if d == nil {
			t.Fatalf("t=%g: the engine waits for a decision, Next returned none", eng.Now())
		}
		b, err := validate(sch.decision, d)
		if err != nil {
			t.Fatalf("step %d: decision payload does not match the schema: %v\n%s", d.Step, err, clip(b))
		}
		if err := decisionInvariants(d, in.Steps(), eng.Now()); err != nil {
			t.Fatalf("step %d: %v\n%s", d.Step, err, clip(b))
		}
		for _, v := range d.ActiveAgents {
			cov.add(cov.kinds, v.Role+"/"+v.Kind)
			cov.add(cov.triggers, v.Kind+"/"+v.Context.Trigger)
			cov.add(cov.kinds, knobVariant(v))
		}
		actions, cerr := c.Act(context.Background(), d)
		if c.Source() == coord.SourceBuiltin {
			if b, err := validate(sch.reply, actions); err != nil {
				t.Fatalf("step %d: reply does not match the schema: %v\n%s", d.Step, err, b)
			}
		}
		n0 := len(in.Messages)
		audits, err := in.Apply(d, actions, c.Source(), cerr)
		if err != nil {
			t.Fatal(err)
		}
		if err := auditInvariants(d, actions, audits, len(in.Messages)-n0); err != nil {
			t.Fatalf("step %d: %v", d.Step, err)
		}
		for i := range audits {
			cov.mu.Lock()
			cov.sources[audits[i].Source]++
			cov.mu.Unlock()
			// An audit's payload is a view just validated within the
			// decision; validating it again on every line would double the
			// test's time, so lines are sampled (every fallback line, and
			// every line of one step in eight).
			if audits[i].Source != coord.SourceFallback && d.Step%8 != 0 {
				continue
			}
			if b, err := validate(sch.audit, &audits[i]); err != nil {
				t.Fatalf("step %d: audit of %s does not match the schema: %v\n%s", d.Step, audits[i].AgentID, err, clip(b))
			}
		}
		for i := n0; i < len(in.Messages); i++ {
			m := &in.Messages[i]
			if b, err := validate(sch.message, m); err != nil {
				t.Fatalf("step %d: message does not match the schema: %v\n%s", d.Step, err, b)
			}
			if m.Step != d.Step || m.Time != d.Time {
				t.Fatalf("step %d: message %+v stamped with another step", d.Step, *m)
			}
			k := m.Type
			if m.Forced {
				k += "+forced"
			}
			cov.add(cov.messages, k)
		}
		if pr := eng.Progress(); pr != last {
			last, idle = pr, 0
		} else if idle++; idle >= limits.NoProgressSteps {
			eng.Truncate(factory.NoProgress)
		}
		if in.Steps() >= limits.MaxDecisions {
			eng.Truncate(factory.DecisionLimit)
		}
	}
	forced := 0
	for _, m := range in.Messages {
		if m.Forced {
			forced++
		}
	}
	if forced != 2*in.Forced {
		t.Errorf("%d forced messages for %d forced placements", forced, in.Forced)
	}
}

// decisionInvariants checks what the schema cannot: indices, the mask,
// ids against their keys, and the activation structure.
func decisionInvariants(d *coord.Decision, step int, now float64) error {
	if d.Version != coord.PayloadVersion || d.Step != step || d.Time != now {
		return fmt.Errorf("header %s step %d time %g, want %s %d %g", d.Version, d.Step, d.Time, coord.PayloadVersion, step, now)
	}
	var item *coord.WorkItem
	bids := 0
	for id, v := range d.ActiveAgents {
		if v.AgentID != id {
			return fmt.Errorf("view under %q has agent_id %q", id, v.AgentID)
		}
		var want string
		switch v.Role {
		case coord.RolePlant:
			want = "plant"
		case coord.RoleArea:
			want = "area:" + v.Observation.Area.Area
		case coord.RoleCell:
			want = "cell:" + v.Observation.Cell.Cell
		case coord.RoleSelector:
			want = coord.AgentModeSelector
			if len(d.ActiveAgents) != 1 {
				return fmt.Errorf("%s: active with %d other agents", id, len(d.ActiveAgents)-1)
			}
		}
		if id != want {
			return fmt.Errorf("%s: role %s observes %q", id, v.Role, want)
		}
		if len(v.ActionMask) != len(v.Options) {
			return fmt.Errorf("%s: %d options, %d mask entries", id, len(v.Options), len(v.ActionMask))
		}
		for i, o := range v.Options {
			if o.Index != i {
				return fmt.Errorf("%s: options[%d].index = %d", id, i, o.Index)
			}
			if v.ActionMask[i] != slices.Contains(v.LegalActions, i) {
				return fmt.Errorf("%s: action_mask[%d] = %v, legal_actions %v", id, i, v.ActionMask[i], v.LegalActions)
			}
		}
		for k, a := range v.LegalActions {
			if a < 0 || a >= len(v.Options) || (k > 0 && a <= v.LegalActions[k-1]) {
				return fmt.Errorf("%s: legal_actions %v not ascending within %d options", id, v.LegalActions, len(v.Options))
			}
		}
		if len(v.Context.RecentEvents) > coord.RecentEvents || len(v.Context.Memory) > coord.MemorySize {
			return fmt.Errorf("%s: %d recent events, %d memory lines", id, len(v.Context.RecentEvents), len(v.Context.Memory))
		}
		switch v.Kind {
		case coord.KindRelease:
			jobs := 0
			for i, o := range v.Options {
				if o.Action == coord.ActDefer && i != len(v.Options)-1 {
					return fmt.Errorf("%s: defer is option %d of %d", id, i, len(v.Options))
				}
				if o.Job != nil {
					jobs++
				}
			}
			if jobs == 0 || jobs > coord.MaxReleaseOptions {
				return fmt.Errorf("%s: %d release options", id, jobs)
			}
		case coord.KindSelectCell, coord.KindReroute:
			if v.Role == coord.RoleArea {
				// Escalate, last, exactly when no cell can take the item
				// (local recovery exhausted).
				room := slices.ContainsFunc(v.Options, func(o coord.Option) bool {
					return o.Cell != nil && o.Cell.FreeSlots > 0 && o.Cell.Down < o.Cell.Machines
				})
				if esc := v.Options[len(v.Options)-1].Action == coord.ActEscalate; esc == room {
					return fmt.Errorf("%s: escalate offered %v while a cell has room %v", id, esc, room)
				}
			}
			fallthrough
		case coord.KindAward:
			for _, o := range v.Options {
				if o.Cell != nil && v.Role == coord.RoleArea && "area:"+o.Cell.Area != id {
					return fmt.Errorf("%s: offers cell %s of area %s", id, o.Cell.Cell, o.Cell.Area)
				}
			}
		case coord.KindBid:
			bids++
			if err := invitationInvariants(id, v.Context.Contract.Invitation, len(d.ActiveAgents)); err != nil {
				return err
			}
		}
		if v.Kind != coord.KindRelease {
			if item != nil && *item != *v.Context.WorkItem {
				return fmt.Errorf("%s: work item %+v, another agent routes %+v", id, *v.Context.WorkItem, *item)
			}
			item = v.Context.WorkItem
		}
	}
	// One agent decides at a time, except the candidate cells of a bid round.
	if n := len(d.ActiveAgents); n > 1 && bids != n {
		return fmt.Errorf("%d active agents, %d of them bidding", n, bids)
	}
	return nil
}

// auditInvariants: one audit per active agent in id order, the payload it
// answered, the committed action legal (the controller's own unless
// replaced), and the messages adding up to those the step sent.
func auditInvariants(d *coord.Decision, actions map[string]int, audits []coord.Audit, sent int) error {
	ids := slices.Sorted(maps.Keys(d.ActiveAgents))
	if len(audits) != len(ids) {
		return fmt.Errorf("%d audits for %d active agents", len(audits), len(ids))
	}
	sum := 0
	for i, a := range audits {
		v := d.ActiveAgents[ids[i]]
		if a.AgentID != ids[i] || a.Payload != v || a.Role != v.Role || a.Kind != v.Kind || a.Step != d.Step || a.Time != d.Time {
			return fmt.Errorf("audit %d (%s %s %s) does not match view %s", i, a.AgentID, a.Role, a.Kind, ids[i])
		}
		if !slices.Contains(v.LegalActions, a.Action) {
			return fmt.Errorf("%s: committed illegal action %d", a.AgentID, a.Action)
		}
		if a.Source == coord.SourceFallback {
			if a.Action != coord.SafeAction(v) {
				return fmt.Errorf("%s: fallback committed %d, SafeAction says %d", a.AgentID, a.Action, coord.SafeAction(v))
			}
		} else if a.Action != actions[a.AgentID] {
			return fmt.Errorf("%s: committed %d, the controller chose %d", a.AgentID, a.Action, actions[a.AgentID])
		}
		sum += a.Messages
	}
	if sum != sent {
		return fmt.Errorf("audits count %d messages, the step sent %d", sum, sent)
	}
	return nil
}

// Hand-written payloads: two valid ones, and mutations of them that the
// schema must reject.
const (
	validRelease = `{"version":"coordbench-payload/v2","step":0,"time":0,"active_agents":{"plant":{
 "agent_id":"plant","role":"plant","kind":"release",
 "observation":{"power_headroom_kw":23.1,"plant":{"power_kw":6.9,"power_cap_kw":30,"wip":0,"wip_cap":12,"backlog":1,
  "completed":0,"jobs":40,"in_transit":0,"areas":[{"area":"A1","cells":2,"machines":3,"busy":0,"down":0,"blocked":0,
  "free_slots":6,"backlog":0,"power_kw":1.5}]}},
 "context":{"trigger":"arrival","recent_events":["arrival"],"working_memory":null},
 "legal_actions":[0,1],
 "options":[{"index":0,"action":"release","job":{"job":0,"product":"A","family":"AIP","arrival":0,"due":660,"work":165}},
  {"index":1,"action":"defer"}],
 "decision_factors":["release the most urgent job"],
 "action_mask":[true,true]}}}`
	validBid = `{"version":"coordbench-payload/v2","step":1,"time":0,"active_agents":{"cell:C08":{
 "agent_id":"cell:C08","role":"cell","kind":"bid",
 "observation":{"power_headroom_kw":23.1,"cell":{"cell":"C08","area":"A3","machines":[{"state":"idle"},{"state":"busy","family":"AIP"}],
  "waiting":0,"incoming":0,"buffer":3,"free_slots":3,"blocked_for_admission":0,"backlog":0,"power_kw":0.6}},
 "context":{"trigger":"announcement","work_item":{"job":1,"op":0,"ops":6,"op_type":"load","product":"E","family":"BELT",
  "base_time":10,"due":580,"slack":435,"at":"dock"},"contract":{"from":"plant","round":1,"proc_time":10,"transport_time":4},
  "recent_events":["release"],"working_memory":["t=0.0 job 0 op 0: bid high"]},
 "legal_actions":[0,1,2,3],
 "options":[{"index":0,"action":"bid","bid":"high"},{"index":1,"action":"bid","bid":"medium"},
  {"index":2,"action":"bid","bid":"low"},{"index":3,"action":"decline"}],
 "decision_factors":["bid high if you can start the item soon"],
 "action_mask":[true,true,true,true]}}}`
)

func mutate(t *testing.T, base string, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// obj walks a decoded JSON object along keys.
func obj(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

func opts(m map[string]any, agent string) []any {
	return obj(m, "active_agents", agent)["options"].([]any)
}

// TestSchemaRejectsInvalid proves the schema constrains payloads: each
// mutation of a valid hand-written payload must fail.
func TestSchemaRejectsInvalid(t *testing.T) {
	sch := loadSchemas(t)
	for name, b := range map[string]string{"release": validRelease, "bid": validBid} {
		if err := validateJSON(sch.decision, []byte(b)); err != nil {
			t.Fatalf("hand-written valid %s payload rejected: %v", name, err)
		}
	}
	plant := func(m map[string]any) map[string]any { return obj(m, "active_agents", "plant") }
	cell := func(m map[string]any) map[string]any { return obj(m, "active_agents", "cell:C08") }
	invalid := map[string][]byte{
		"missing legal_actions": mutate(t, validRelease, func(m map[string]any) { delete(plant(m), "legal_actions") }),
		"unknown kind":          mutate(t, validRelease, func(m map[string]any) { plant(m)["kind"] = "negotiate" }),
		"plant view with a cell observation": mutate(t, validRelease, func(m map[string]any) {
			plant(m)["observation"] = cell(mutateMap(t, validBid))["observation"]
		}),
		"plant view with two observation sections": mutate(t, validRelease, func(m map[string]any) {
			obj(plant(m), "observation")["cell"] = obj(cell(mutateMap(t, validBid)), "observation", "cell")
		}),
		"bid option without a bid class": mutate(t, validBid, func(m map[string]any) {
			delete(opts(m, "cell:C08")[1].(map[string]any), "bid")
		}),
		"unknown bid class": mutate(t, validBid, func(m map[string]any) { opts(m, "cell:C08")[0].(map[string]any)["bid"] = "huge" }),
		"bid options reordered": mutate(t, validBid, func(m map[string]any) {
			o := opts(m, "cell:C08")
			o[0], o[3] = o[3], o[0]
		}),
		"release option without its job": mutate(t, validRelease, func(m map[string]any) {
			delete(opts(m, "plant")[0].(map[string]any), "job")
		}),
		"defer option carrying a job": mutate(t, validRelease, func(m map[string]any) {
			opts(m, "plant")[1].(map[string]any)["job"] = opts(m, "plant")[0].(map[string]any)["job"]
		}),
		"escalate option in a release": mutate(t, validRelease, func(m map[string]any) {
			opts(m, "plant")[1].(map[string]any)["action"] = "escalate"
		}),
		"string action index": mutate(t, validRelease, func(m map[string]any) { plant(m)["legal_actions"] = []any{"0", 1} }),
		"mask of numbers":     mutate(t, validRelease, func(m map[string]any) { plant(m)["action_mask"] = []any{1, 1} }),
		"wrong version":       mutate(t, validRelease, func(m map[string]any) { m["version"] = "coordbench-payload/v0" }),
		"no active agent":     mutate(t, validRelease, func(m map[string]any) { m["active_agents"] = map[string]any{} }),
		"bad agent key": mutate(t, validRelease, func(m map[string]any) {
			a := m["active_agents"].(map[string]any)
			a["boss"] = a["plant"]
			delete(a, "plant")
		}),
		"cell key for a plant view": mutate(t, validRelease, func(m map[string]any) {
			a := m["active_agents"].(map[string]any)
			a["cell:C01"] = a["plant"]
			delete(a, "plant")
		}),
		"cell deciding a release": mutate(t, validBid, func(m map[string]any) { cell(m)["kind"] = "release" }),
		"unknown machine state": mutate(t, validBid, func(m map[string]any) {
			obj(cell(m), "observation", "cell")["machines"].([]any)[0].(map[string]any)["state"] = "sleeping"
		}),
		"unknown trigger":        mutate(t, validBid, func(m map[string]any) { obj(cell(m), "context")["trigger"] = "whim" }),
		"release trigger on bid": mutate(t, validBid, func(m map[string]any) { obj(cell(m), "context")["trigger"] = "arrival" }),
		"bid without work item":  mutate(t, validBid, func(m map[string]any) { delete(obj(cell(m), "context"), "work_item") }),
		"unknown alarm":          mutate(t, validBid, func(m map[string]any) { obj(cell(m), "context")["alarms"] = []any{"fire"} }),
		"unknown field":          mutate(t, validBid, func(m map[string]any) { cell(m)["confidence"] = 0.9 }),
	}
	for name, b := range invalid {
		if err := validateJSON(sch.decision, b); err == nil {
			t.Errorf("%s: accepted by the schema\n%s", name, b)
		}
	}

	// The reply, audit and message definitions constrain too.
	reply := map[string]string{
		`{"plant":0}`:                     "",
		`{"cell:C01":1,"cell:C02":3}`:     "",
		`{}`:                              "empty",
		`{"plant":"0"}`:                   "string index",
		`{"plant":-1}`:                    "negative index",
		`{"plant":{"action":0}}`:          "B.1 single-agent shape",
		`{"robot":0}`:                     "unknown agent id",
		`{"plant":0.5}`:                   "fractional index",
		`{"area:A1":2,"cell:C01":1.0e0}`:  "",
		`{"area:A1":2,"cell:C01":"high"}`: "bid class instead of index",
	}
	for b, why := range reply {
		err := validateJSON(sch.reply, []byte(b))
		if (why == "") != (err == nil) {
			t.Errorf("reply %s (%s): validation error %v", b, why, err)
		}
	}
	var bid map[string]any
	json.Unmarshal([]byte(validBid), &bid)
	view := obj(bid, "active_agents", "cell:C08")
	audit := func(f func(a map[string]any)) []byte {
		a := map[string]any{"step": 1, "time": 0, "agent_id": "cell:C08", "role": "cell", "kind": "bid", "action": 0,
			"source": "llm", "messages": 2, "payload": view}
		if f != nil {
			f(a)
		}
		b, _ := json.Marshal(a)
		return b
	}
	if err := validateJSON(sch.audit, audit(nil)); err != nil {
		t.Errorf("valid audit rejected: %v", err)
	}
	for why, b := range map[string][]byte{
		"fallback without reason": audit(func(a map[string]any) { a["source"] = "fallback" }),
		"reason without fallback": audit(func(a map[string]any) { a["reason"] = "no action for this agent" }),
		"unknown source":          audit(func(a map[string]any) { a["source"] = "oracle" }),
		"no payload":              audit(func(a map[string]any) { delete(a, "payload") }),
		"negative messages":       audit(func(a map[string]any) { a["messages"] = -2 }),
	} {
		if err := validateJSON(sch.audit, b); err == nil {
			t.Errorf("audit with %s accepted", why)
		}
	}
	msg := `{"step":3,"time":1.5,"type":"%s","sender":"%s","receiver":"%s","job":2,"op":1%s}`
	for _, c := range []struct {
		typ, from, to, extra string
		ok                   bool
	}{
		{"announce", "plant", "cell:C1", "", true},
		{"assign", "plant", "cell:C1", `,"forced":true`, true},
		{"accept", "cell:C1", "plant", `,"forced":true`, true},
		{"report", "area:A1", "plant", "", true},
		{"gossip", "plant", "cell:C1", "", false},
		{"allocate", "plant", "cell:C1", "", false},
		{"bid", "plant", "cell:C1", "", false},
		{"escalate", "cell:C1", "plant", "", false},
		{"bid", "cell:C1", "plant", `,"forced":true`, false},
		{"assign", "plant", "cell:C1", `,"forced":false`, false},
	} {
		b := fmt.Sprintf(msg, c.typ, c.from, c.to, c.extra)
		if err := validateJSON(sch.message, []byte(b)); (err == nil) != c.ok {
			t.Errorf("message %s: valid=%v, want %v (%v)", b, err == nil, c.ok, err)
		}
	}
}

func mutateMap(t *testing.T, base string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// fenced returns the bodies of the ```lang blocks of a Markdown file.
func fenced(t *testing.T, path, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur strings.Builder
	in, keep := false, false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.HasPrefix(l, "```"):
			in, keep = true, l == "```"+lang
			cur.Reset()
		case in && l == "```":
			if keep {
				out = append(out, cur.String())
			}
			in = false
		case in:
			cur.WriteString(l + "\n")
		}
	}
	return out
}

// TestDocExamples keeps the documentation honest: the example payloads and
// messages of docs/payload.md match the schema, and the paradigm file of
// docs/paradigms.md loads as the seed's my_hybrid.
func TestDocExamples(t *testing.T) {
	sch := loadSchemas(t)
	examples := fenced(t, "../../docs/payload.md", "json")
	if len(examples) < 2 {
		t.Fatalf("docs/payload.md: want the bid and award examples, found %d json blocks", len(examples))
	}
	for i, ex := range examples {
		if err := validateJSON(sch.decision, []byte(ex)); err != nil {
			t.Errorf("docs/payload.md json example %d: %v", i+1, err)
		}
	}
	msgs := 0
	for _, block := range fenced(t, "../../docs/payload.md", "") {
		for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
			if strings.HasPrefix(l, `{"step"`) {
				msgs++
				if err := validateJSON(sch.message, []byte(l)); err != nil {
					t.Errorf("docs/payload.md message %s: %v", l, err)
				}
			}
		}
	}
	if msgs == 0 {
		t.Error("docs/payload.md: no example messages found")
	}

	files := fenced(t, "../../docs/paradigms.md", "yaml")
	if len(files) < 2 {
		t.Fatalf("docs/paradigms.md: want the yaml paradigm files my_hybrid and adaptive first, found %d", len(files))
	} // the later ones are checked by TestDocKnobExamples
	shipped, err := new(coord.Paradigms).AddFile("../../examples/paradigms/adaptive.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path2 := t.TempDir() + "/adaptive.yaml"
	if err := os.WriteFile(path2, []byte(files[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if doc, err := new(coord.Paradigms).AddFile(path2); err != nil || !doc.Equal(shipped) {
		t.Errorf("docs/paradigms.md's adaptive paradigm (%v) is not examples/paradigms/adaptive.yaml", err)
	}
	path := t.TempDir() + "/my_hybrid.yaml"
	if err := os.WriteFile(path, []byte(files[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := new(coord.Paradigms).AddFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m.Description = ""
	if m != myHybrid {
		t.Errorf("docs/paradigms.md my_hybrid loads as %+v, want %+v", m, myHybrid)
	}
}
