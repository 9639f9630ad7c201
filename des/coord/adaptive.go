package coord

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Adaptive makes a paradigm dynamic: rules that choose, per work item,
// the authority mode that routes it, from the state the roles could see
// when the item's routing starts (ModeState). The first rule whose
// condition holds gives the mode; when none holds, the paradigm's own
// switches do. The harness makes the choice, writes it to the trace
// (mode_selected) and shows it in every payload of the item
// (Context.Authority); `des validate` recomputes the state from the trace
// and the choice from the rules. docs/paradigms.md describes the language.
type Adaptive struct {
	// Modes are switch sets that rules may name besides the built-in
	// paradigms and the paradigm's own id. They are static (no rules).
	Modes []AuthorityMode `json:"modes,omitempty" yaml:"modes,omitempty"`
	// RejectionWindow is the span, in the instance's time units, over
	// which ModeState.RecentRejections counts cells' rejections (0: the
	// default, DefaultRejectionWindow).
	RejectionWindow float64 `json:"rejection_window,omitempty" yaml:"rejection_window,omitempty"`
	// Rules are tried in order (Selector "rules", the default).
	Rules []ModeRule `json:"rules,omitempty" yaml:"rules,omitempty"`
	// Selector says who chooses: "rules" (or empty: the rules above) or
	// "agent": the mode_selector agent, a decision of its own (kind
	// select_mode) among the modes of Offer.
	Selector string `json:"selector,omitempty" yaml:"selector,omitempty"`
	// Offer lists the modes the mode_selector agent chooses among, in
	// option order (Selector "agent" only): built-in paradigms, ids of
	// Modes, or the paradigm's own id.
	Offer []string `json:"offer,omitempty" yaml:"offer,omitempty"`
}

// Who chooses an adaptive paradigm's modes (Adaptive.Selector).
const (
	SelectorRules = "rules"
	SelectorAgent = "agent"
)

// RuleOfAgent is ModeChoice.Rule (and the trace's mode_selected rule) when
// the mode_selector agent chose.
const RuleOfAgent = -2

// maxOffer bounds Adaptive.Offer.
const maxOffer = 16

// ByAgent reports whether the mode_selector agent chooses the modes.
func (a *Adaptive) ByAgent() bool { return a.Selector == SelectorAgent }

// DefaultRejectionWindow is Adaptive.RejectionWindow when the file gives
// none: 300 time units (five minutes on the reported instances).
const DefaultRejectionWindow = 300

// Window is the rejection window in effect.
func (a *Adaptive) Window() float64 {
	if a.RejectionWindow > 0 {
		return a.RejectionWindow
	}
	return DefaultRejectionWindow
}

// ModeRule chooses Mode while When holds.
type ModeRule struct {
	When Condition `json:"when" yaml:"when"`
	// Mode is the id of the mode that routes the item: a built-in
	// paradigm, one of Adaptive.Modes, or the paradigm's own id.
	Mode string `json:"mode" yaml:"mode"`
}

// Condition is a test on the ModeState: exactly one of All (every
// condition holds), Any (at least one holds), Not (it does not hold), or
// Feature with at least one comparison (all of those given hold).
type Condition struct {
	All     []Condition `json:"all,omitempty" yaml:"all,omitempty"`
	Any     []Condition `json:"any,omitempty" yaml:"any,omitempty"`
	Not     *Condition  `json:"not,omitempty" yaml:"not,omitempty"`
	Feature string      `json:"feature,omitempty" yaml:"feature,omitempty"`
	Lt      *float64    `json:"lt,omitempty" yaml:"lt,omitempty"`
	Le      *float64    `json:"le,omitempty" yaml:"le,omitempty"`
	Gt      *float64    `json:"gt,omitempty" yaml:"gt,omitempty"`
	Ge      *float64    `json:"ge,omitempty" yaml:"ge,omitempty"`
	Eq      *float64    `json:"eq,omitempty" yaml:"eq,omitempty"`
	Ne      *float64    `json:"ne,omitempty" yaml:"ne,omitempty"`
}

// maxConditionDepth and maxConditions bound a rule set read from a file.
const (
	maxConditionDepth = 16
	maxConditions     = 1024
	maxRules          = 256
)

// ModeState is what an adaptive paradigm's rules read: figures of the
// plant and of the work item that the roles see in their payloads, taken
// when the item's routing starts. docs/paradigms.md defines each one as
// `des validate` recomputes it from the trace.
type ModeState struct {
	// PowerHeadroom is 1 − power_kw / power_cap_kw (1 without a cap).
	PowerHeadroom float64 `json:"power_headroom"`
	// WIP is the jobs released and not complete; WIPLoad is WIP / wip_cap
	// (0 without a cap).
	WIP     int     `json:"wip"`
	WIPLoad float64 `json:"wip_load"`
	// Backlog is the jobs arrived and not released.
	Backlog int `json:"backlog"`
	// DownMachines is the machines down in the plant; BlockedJobs the jobs
	// waiting for a slot of a full cell.
	DownMachines int `json:"down_machines"`
	BlockedJobs  int `json:"blocked_jobs"`
	// CapableCells is the cells able to run the item's operation;
	// CapableCellsDown those of them with a machine down;
	// CapableFreeSlots their free inbound buffer slots.
	CapableCells     int `json:"capable_cells"`
	CapableCellsDown int `json:"capable_cells_down"`
	CapableFreeSlots int `json:"capable_free_slots"`
	// Slack is the item's due date − now − its nominal work left, as the
	// payload's work_item.slack (rounded to 0.01).
	Slack float64 `json:"slack"`
	// Reroute is 1 when the item is a blocked job offered to routing
	// again, else 0.
	Reroute int `json:"reroute"`
	// RecentRejections is the contracts cells rejected in the rejection
	// window before this item (decision steps before its own).
	RecentRejections int `json:"recent_rejections"`
}

// ModeFeatures lists the features a Condition may name, in ModeState's
// order.
func ModeFeatures() []string {
	return []string{"power_headroom", "wip", "wip_load", "backlog", "down_machines", "blocked_jobs",
		"capable_cells", "capable_cells_down", "capable_free_slots", "slack", "reroute", "recent_rejections"}
}

// Feature is the value of the feature called name, and whether there is one.
func (s *ModeState) Feature(name string) (float64, bool) {
	switch name {
	case "power_headroom":
		return s.PowerHeadroom, true
	case "wip":
		return float64(s.WIP), true
	case "wip_load":
		return s.WIPLoad, true
	case "backlog":
		return float64(s.Backlog), true
	case "down_machines":
		return float64(s.DownMachines), true
	case "blocked_jobs":
		return float64(s.BlockedJobs), true
	case "capable_cells":
		return float64(s.CapableCells), true
	case "capable_cells_down":
		return float64(s.CapableCellsDown), true
	case "capable_free_slots":
		return float64(s.CapableFreeSlots), true
	case "slack":
		return s.Slack, true
	case "reroute":
		return float64(s.Reroute), true
	case "recent_rejections":
		return float64(s.RecentRejections), true
	}
	return 0, false
}

// Holds evaluates c on s. A feature that s lacks never holds (Validate
// rejects such a condition).
func (c *Condition) Holds(s *ModeState) bool {
	switch {
	case c.All != nil:
		for i := range c.All {
			if !c.All[i].Holds(s) {
				return false
			}
		}
		return true
	case c.Any != nil:
		for i := range c.Any {
			if c.Any[i].Holds(s) {
				return true
			}
		}
		return false
	case c.Not != nil:
		return !c.Not.Holds(s)
	}
	v, ok := s.Feature(c.Feature)
	if !ok {
		return false
	}
	return (c.Lt == nil || v < *c.Lt) && (c.Le == nil || v <= *c.Le) && (c.Gt == nil || v > *c.Gt) &&
		(c.Ge == nil || v >= *c.Ge) && (c.Eq == nil || v == *c.Eq) && (c.Ne == nil || v != *c.Ne)
}

// String writes c as an expression: "power_headroom < 0.1 or capable_cells_down > 0".
func (c *Condition) String() string {
	var b strings.Builder
	c.write(&b, false)
	return b.String()
}

func (c *Condition) write(b *strings.Builder, nested bool) {
	join := func(cs []Condition, op string) {
		if nested {
			b.WriteByte('(')
		}
		for i := range cs {
			if i > 0 {
				b.WriteString(op)
			}
			cs[i].write(b, true)
		}
		if nested {
			b.WriteByte(')')
		}
	}
	switch {
	case c.All != nil:
		join(c.All, " and ")
	case c.Any != nil:
		join(c.Any, " or ")
	case c.Not != nil:
		b.WriteString("not ")
		c.Not.write(b, true)
	default:
		first := true
		for _, cmp := range c.comparisons() {
			if !first {
				b.WriteString(" and ")
			}
			first = false
			fmt.Fprintf(b, "%s %s %g", c.Feature, cmp.op, cmp.v)
		}
	}
}

type comparison struct {
	op string
	v  float64
}

func (c *Condition) comparisons() []comparison {
	var out []comparison
	for _, x := range []struct {
		op string
		v  *float64
	}{{"<", c.Lt}, {"<=", c.Le}, {">", c.Gt}, {">=", c.Ge}, {"==", c.Eq}, {"!=", c.Ne}} {
		if x.v != nil {
			out = append(out, comparison{x.op, *x.v})
		}
	}
	return out
}

// validate checks c; path names it in errors ("rules[0].when.any[1]").
func (c *Condition) validate(path string, depth int, count *int) error {
	err := c.check(path, depth, count)
	var fe *FieldError
	if err != nil && !errors.As(err, &fe) {
		return &FieldError{Path: "adaptive." + path, Msg: strings.TrimPrefix(err.Error(), path+": ")}
	}
	return err
}

func (c *Condition) check(path string, depth int, count *int) error {
	if *count++; *count > maxConditions {
		return fmt.Errorf("%s: more than %d conditions", path, maxConditions)
	}
	if depth > maxConditionDepth {
		return fmt.Errorf("%s: conditions nested deeper than %d", path, maxConditionDepth)
	}
	forms := 0
	for _, set := range []bool{c.All != nil, c.Any != nil, c.Not != nil, c.Feature != ""} {
		if set {
			forms++
		}
	}
	if forms != 1 {
		return fmt.Errorf("%s: a condition has exactly one of all, any, not or feature (got %d)", path, forms)
	}
	cmps := c.comparisons()
	if c.Feature == "" && len(cmps) > 0 {
		return fmt.Errorf("%s: comparisons (lt, le, gt, ge, eq, ne) go with a feature", path)
	}
	for _, sub := range []struct {
		name string
		cs   []Condition
	}{{"all", c.All}, {"any", c.Any}} {
		if sub.cs != nil && len(sub.cs) == 0 {
			return &FieldError{Path: "adaptive." + path + "." + sub.name, Msg: "an empty list: give at least one condition"}
		}
		for i := range sub.cs {
			if err := sub.cs[i].validate(fmt.Sprintf("%s.%s[%d]", path, sub.name, i), depth+1, count); err != nil {
				return err
			}
		}
	}
	if c.Not != nil {
		return c.Not.validate(path+".not", depth+1, count)
	}
	if c.Feature != "" {
		if !slices.Contains(ModeFeatures(), c.Feature) {
			return fmt.Errorf("%s: unknown feature %q (have: %s)", path, c.Feature, strings.Join(ModeFeatures(), ", "))
		}
		if len(cmps) == 0 {
			return fmt.Errorf("%s: feature %s has no comparison (lt, le, gt, ge, eq or ne)", path, c.Feature)
		}
		for _, x := range cmps {
			if math.IsNaN(x.v) || math.IsInf(x.v, 0) {
				return fmt.Errorf("%s: %s %s %v: the bound must be a finite number", path, c.Feature, x.op, x.v)
			}
		}
	}
	return nil
}

// FieldError is an invalid part of an adaptive paradigm: Path names it as
// a file would ("adaptive.rules[0].when.any[1]"), so that a reader of the
// file can point at its line.
type FieldError struct {
	Mode string
	Path string
	Msg  string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("authority mode %q: %s: %s", e.Mode, e.Path, e.Msg)
}

// validateAdaptive checks the rules of m (which has them): every mode a
// rule names exists and is static, every condition is well formed.
func (m AuthorityMode) validateAdaptive() error {
	a := m.Adaptive
	fail := func(format string, args ...any) error {
		return fmt.Errorf("authority mode %q: adaptive: "+format, append([]any{m.ID}, args...)...)
	}
	at := func(path, format string, args ...any) error {
		return &FieldError{Mode: m.ID, Path: "adaptive." + path, Msg: fmt.Sprintf(format, args...)}
	}
	switch a.Selector {
	case "", SelectorRules:
		if len(a.Rules) == 0 {
			return at("rules", "give at least one rule (a paradigm without rules is static: leave adaptive out)")
		}
		if len(a.Offer) > 0 {
			return at("offer", "offer is the mode_selector agent's choice: it goes with selector: agent")
		}
	case SelectorAgent:
		if len(a.Rules) > 0 {
			return at("rules", "with selector: agent the mode_selector agent chooses: give offer, not rules")
		}
		if len(a.Offer) < 2 || len(a.Offer) > maxOffer {
			return at("offer", "give between 2 and %d modes for the mode_selector agent to choose among (got %d)", maxOffer, len(a.Offer))
		}
	default:
		return at("selector", "want rules or agent (got %q)", a.Selector)
	}
	if len(a.Rules) > maxRules || len(a.Modes) > maxRules {
		return fail("at most %d rules and %d modes", maxRules, maxRules)
	}
	if a.RejectionWindow < 0 || math.IsNaN(a.RejectionWindow) || math.IsInf(a.RejectionWindow, 0) {
		return at("rejection_window", "must be a positive number of time units (got %v)", a.RejectionWindow)
	}
	seen := map[string]bool{m.ID: true}
	for i, sub := range a.Modes {
		path := fmt.Sprintf("modes[%d]", i)
		if sub.Adaptive != nil {
			return at(path, "%s: a mode that rules choose is static: it has no adaptive rules", sub.ID)
		}
		if err := sub.Validate(); err != nil {
			return at(path, "%v", err)
		}
		if _, isBuiltin := builtin(sub.ID); isBuiltin || seen[sub.ID] {
			return at(path, "id %q is taken (a built-in paradigm, the paradigm's own id or an earlier mode)", sub.ID)
		}
		seen[sub.ID] = true
	}
	for i, id := range a.Offer {
		if _, ok := m.ruleMode(id); !ok {
			return at(fmt.Sprintf("offer[%d]", i), "unknown mode %q (a built-in paradigm, one of modes, or %q)", id, m.ID)
		}
		if slices.Contains(a.Offer[:i], id) {
			return at(fmt.Sprintf("offer[%d]", i), "%q is offered twice", id)
		}
	}
	count := 0
	for i := range a.Rules {
		r := &a.Rules[i]
		if _, ok := m.ruleMode(r.Mode); !ok {
			return at(fmt.Sprintf("rules[%d].mode", i), "unknown mode %q (a built-in paradigm, one of modes, or %q)", r.Mode, m.ID)
		}
		if err := r.When.validate(fmt.Sprintf("rules[%d].when", i), 0, &count); err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				fe.Mode = m.ID
			}
			return err
		}
	}
	return nil
}

// ruleMode finds the switch set a rule of m names: m's own (without its
// rules), one of its Adaptive.Modes, or a built-in.
func (m AuthorityMode) ruleMode(id string) (AuthorityMode, bool) {
	if id == m.ID {
		own := m
		own.Adaptive = nil
		return own, true
	}
	if m.Adaptive != nil {
		for _, sub := range m.Adaptive.Modes {
			if sub.ID == id {
				return sub, true
			}
		}
	}
	return builtin(id)
}

// Choose gives the rule that applies to s (-1: none, the paradigm's own
// switches) and the id of the mode it names. m must have rules.
func (m AuthorityMode) Choose(s *ModeState) (rule int, mode string) {
	for i := range m.Adaptive.Rules {
		if m.Adaptive.Rules[i].When.Holds(s) {
			return i, m.Adaptive.Rules[i].Mode
		}
	}
	return -1, m.ID
}

// Authority is the payload's account of who has authority over the work
// item under an adaptive paradigm (Context.Authority): the mode the
// harness chose, by which rule (-1: none held, the paradigm's own
// switches), and the rule's condition as text.
type Authority struct {
	Paradigm string `json:"paradigm"`
	Mode     string `json:"mode_id"`
	Routing  string `json:"routing_authority_mode"`
	Rule     int    `json:"rule"`
	Because  string `json:"because,omitempty"`
}

// ModeChoice is one choice of an adaptive paradigm: the trace's
// mode_selected record.
type ModeChoice struct {
	Step  int
	Time  float64
	Job   int
	Op    int // the job's operation index (its position in the route)
	Mode  string
	Rule  int
	State ModeState
}

// adaptiveSel is an adaptive paradigm compiled for an episode: the mode
// of each rule and the paradigm's own, resolved once.
type adaptiveSel struct {
	mode    AuthorityMode   // the paradigm, with its rules
	own     AuthorityMode   // its own switches, rules dropped
	byRule  []AuthorityMode // the mode of each rule
	because []string        // each rule's condition as text
	offered []AuthorityMode // the modes the mode_selector agent chooses among (Offer)
	window  float64
}

func compileAdaptive(m AuthorityMode) *adaptiveSel {
	s := &adaptiveSel{mode: m, window: m.Adaptive.Window()}
	s.own, _ = m.ruleMode(m.ID)
	for i := range m.Adaptive.Rules {
		sub, _ := m.ruleMode(m.Adaptive.Rules[i].Mode) // Validate resolved it
		s.byRule = append(s.byRule, sub)
		s.because = append(s.because, m.Adaptive.Rules[i].When.String())
	}
	for _, id := range m.Adaptive.Offer {
		sub, _ := m.ruleMode(id)
		s.offered = append(s.offered, sub)
	}
	return s
}

// Summary says in one line how an adaptive paradigm chooses its modes
// ("" for a static one): "2 rules choose centralized; otherwise its own
// switches" or "the mode_selector chooses among centralized, hierarchical".
func (m AuthorityMode) Summary() string {
	a := m.Adaptive
	if a == nil {
		return ""
	}
	if a.ByAgent() {
		return "the mode_selector agent chooses among " + strings.Join(a.Offer, ", ")
	}
	var modes []string
	for _, r := range a.Rules {
		if !slices.Contains(modes, r.Mode) {
			modes = append(modes, r.Mode)
		}
	}
	return fmt.Sprintf("%d rules choose %s; otherwise its own switches", len(a.Rules), strings.Join(modes, ", "))
}
