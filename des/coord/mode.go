package coord

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// AuthorityMode is a coordination paradigm as data: the switches that fix
// who routes work, what a cell may answer, and how failures are recovered.
// The engine never changes with the mode; only activations, legal actions
// and protocol messages do. docs/paradigms.md explains each switch.
type AuthorityMode struct {
	ID string `json:"mode_id" yaml:"mode_id"`
	// RoutingAuthorityMode fixes who chooses the cell of a work item:
	// "centralized" (the plant), "hierarchical" and "holonic_hybrid" (the
	// plant chooses an area, the area a cell), "heterarchical_cnp" (a
	// contract net mediated by the plant: capable cells bid, the plant awards).
	RoutingAuthorityMode string `json:"routing_authority_mode" yaml:"routing_authority_mode"`
	// CellContractActions: "accept_only" (cells take what they are given,
	// no cell step) or "accept_reject" (the chosen cell is activated and may
	// reject).
	CellContractActions string `json:"cell_contract_actions" yaml:"cell_contract_actions"`
	// AreaLocalRerouteEnabled: after a rejection, the area may try a
	// sibling cell before escalating to the plant.
	AreaLocalRerouteEnabled bool `json:"area_local_reroute_enabled" yaml:"area_local_reroute_enabled"`
	// PlantRerouteRequired: a failure that reaches the plant activates the
	// plant to reselect; otherwise the plant falls back at once to the
	// contract-safe assignment (no decision step).
	PlantRerouteRequired bool `json:"plant_reroute_required" yaml:"plant_reroute_required"`
	// MediatedBidRoundEnabled: the deciding agent announces the work item,
	// the candidate cells bid or decline in one step, and it awards.
	MediatedBidRoundEnabled bool `json:"mediated_bid_round_enabled" yaml:"mediated_bid_round_enabled"`
	// BidInvitations, k > 0, announces a bid round's item to the k
	// best-placed candidate cells only (selective activation; 0: to every
	// candidate). See activation.go.
	BidInvitations int `json:"bid_invitations,omitempty" yaml:"bid_invitations,omitempty"`
	// ViewDetail is "full" (or empty) or "summary": the observation's
	// lists replaced by totals (compressed views). See compress.go.
	ViewDetail  string `json:"view_detail,omitempty" yaml:"view_detail,omitempty"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Adaptive, if set, makes the paradigm dynamic: its rules choose the
	// mode of each work item, and the switches above are the mode when no
	// rule holds (see Adaptive). Nil for a static paradigm.
	Adaptive *Adaptive `json:"adaptive,omitempty" yaml:"adaptive,omitempty"`
}

// Equal reports whether m and o are the same paradigm: the same switches
// and, for adaptive paradigms, the same rules.
func (m AuthorityMode) Equal(o AuthorityMode) bool {
	a, b := m.Adaptive, o.Adaptive
	m.Adaptive, o.Adaptive = nil, nil
	if m != o || (a == nil) != (b == nil) {
		return false
	}
	return a == nil || reflect.DeepEqual(a, b)
}

// Routing authority modes.
const (
	RoutingCentralized  = "centralized"
	RoutingHierarchical = "hierarchical"
	RoutingCNP          = "heterarchical_cnp"
	RoutingHolonic      = "holonic_hybrid"
)

// Cell contract actions.
const (
	AcceptOnly   = "accept_only"
	AcceptReject = "accept_reject"
)

// hasAreaLevel reports whether the plant delegates the cell choice to an area.
func (m AuthorityMode) hasAreaLevel() bool {
	return m.RoutingAuthorityMode == RoutingHierarchical || m.RoutingAuthorityMode == RoutingHolonic
}

// Validate reports an invalid combination of switches, saying why.
func (m AuthorityMode) Validate() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("authority mode %q: "+format, append([]any{m.ID}, args...)...)
	}
	if m.ID == "" {
		return fmt.Errorf("authority mode: mode_id must not be empty")
	}
	switch m.RoutingAuthorityMode {
	case RoutingCentralized, RoutingHierarchical, RoutingCNP, RoutingHolonic:
	default:
		return fail("routing_authority_mode must be one of centralized, hierarchical, heterarchical_cnp, holonic_hybrid (got %q)", m.RoutingAuthorityMode)
	}
	switch m.CellContractActions {
	case AcceptOnly, AcceptReject:
	default:
		return fail("cell_contract_actions must be accept_only or accept_reject (got %q)", m.CellContractActions)
	}
	if m.AreaLocalRerouteEnabled && !m.hasAreaLevel() {
		return fail("area_local_reroute_enabled needs an area level: routing_authority_mode hierarchical or holonic_hybrid (got %s)", m.RoutingAuthorityMode)
	}
	if m.AreaLocalRerouteEnabled && m.CellContractActions == AcceptOnly && !m.MediatedBidRoundEnabled {
		return fail("area_local_reroute_enabled has nothing to recover from: with accept_only cells and no bid round no cell ever refuses")
	}
	if m.RoutingAuthorityMode == RoutingCNP && !m.MediatedBidRoundEnabled {
		return fail("heterarchical_cnp routing is a contract net: it needs mediated_bid_round_enabled")
	}
	if m.RoutingAuthorityMode == RoutingCentralized && m.MediatedBidRoundEnabled {
		return fail("centralized routing has the plant pick the cell: a bid round makes it heterarchical_cnp")
	}
	if err := m.validateInvitations(); err != nil {
		return fail("%v", err)
	}
	if err := m.validateViewDetail(); err != nil {
		return fail("%v", err)
	}
	if m.Adaptive != nil {
		return m.validateAdaptive()
	}
	return nil
}

// ModeSelector chooses the authority mode that coordinates one work item.
// A static paradigm returns the same mode every time; a dynamic one (the
// seed's F.3) may look at the visible state, for example switching to
// local coordination when the plant is congested. The interpreter calls
// it once per work item, when the item's routing starts.
type ModeSelector interface {
	ModeFor(item *WorkItem, plant *PlantObservation) AuthorityMode
}

// ModeFor makes a static AuthorityMode a ModeSelector.
func (m AuthorityMode) ModeFor(*WorkItem, *PlantObservation) AuthorityMode { return m }

// Paradigms is a set of paradigms that ids name: the four built-ins,
// then the custom ones added to it. The zero value holds the built-ins
// only, and so does a nil *Paradigms for Lookup, List and IDs. A set
// belongs to whoever built it (a suite, a command, a server): nothing in
// this package keeps one, so two suites of one process never see each
// other's custom paradigms. Build a set, then share it read-only: Add and
// AddFile must not run concurrently with anything else on the same set.
type Paradigms struct {
	custom map[string]AuthorityMode
}

// Lookup finds the paradigm of an id.
func (p *Paradigms) Lookup(id string) (AuthorityMode, error) {
	if m, ok := builtin(id); ok {
		return m, nil
	}
	if p != nil {
		if m, ok := p.custom[id]; ok {
			return m, nil
		}
	}
	ids := p.IDs()
	slices.Sort(ids)
	return AuthorityMode{}, fmt.Errorf("unknown paradigm %q (have: %v)", id, ids)
}

// List lists the set: the four built-ins in the seed's order, then the
// custom paradigms by id.
func (p *Paradigms) List() []AuthorityMode {
	out := Builtins()
	if p != nil {
		for _, id := range slices.Sorted(maps.Keys(p.custom)) {
			out = append(out, p.custom[id])
		}
	}
	return out
}

// IDs lists the ids of the set in the order of List.
func (p *Paradigms) IDs() []string {
	var ids []string
	for _, m := range p.List() {
		ids = append(ids, m.ID)
	}
	return ids
}

// Add adds a custom paradigm to the set; it fails on an invalid mode or a
// taken id (a built-in's or an earlier custom one's).
func (p *Paradigms) Add(m AuthorityMode) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if _, err := p.Lookup(m.ID); err == nil {
		return fmt.Errorf("authority mode %q is already registered", m.ID)
	}
	if p.custom == nil {
		p.custom = map[string]AuthorityMode{}
	}
	p.custom[m.ID] = m
	return nil
}

// builtin finds a built-in paradigm.
func builtin(id string) (AuthorityMode, bool) {
	i := slices.IndexFunc(builtins[:], func(m AuthorityMode) bool { return m.ID == id })
	if i < 0 {
		return AuthorityMode{}, false
	}
	return builtins[i], true
}

// builtins are the four built-in paradigms of the seed (section 3.3), in
// its order. Callers get copies: Builtins, Centralized, ...
var builtins = [...]AuthorityMode{
	{
		ID: "centralized", RoutingAuthorityMode: RoutingCentralized, CellContractActions: AcceptOnly,
		PlantRerouteRequired: true,
		Description:          "the plant picks the cell directly; accept-only cells; the plant reselects on failure",
	},
	{
		ID: "hierarchical", RoutingAuthorityMode: RoutingHierarchical, CellContractActions: AcceptOnly,
		PlantRerouteRequired: true,
		Description:          "plant -> area -> cell chain; accept-only cells; an area that cannot place the item escalates and the plant reselects",
	},
	{
		ID: "heterarchical_cnp", RoutingAuthorityMode: RoutingCNP, CellContractActions: AcceptReject,
		MediatedBidRoundEnabled: true,
		Description:             "mediated contract net: capable cells bid or decline, the plant awards, the cell accepts or rejects; re-award, then re-announce",
	},
	{
		ID: "holonic_hybrid", RoutingAuthorityMode: RoutingHolonic, CellContractActions: AcceptReject,
		AreaLocalRerouteEnabled: true,
		Description:             "plant -> area -> cell holarchy; cells may reject, the area reroutes among siblings; plant fallback only when local options are gone",
	},
}

// Builtins returns the four built-in paradigms in the seed's order.
func Builtins() []AuthorityMode { return slices.Clone(builtins[:]) }

// Centralized is the built-in paradigm "centralized": the plant picks the
// cell.
func Centralized() AuthorityMode { return builtins[0] }

// Hierarchical is the built-in paradigm "hierarchical": plant, area, cell.
func Hierarchical() AuthorityMode { return builtins[1] }

// HeterarchicalCNP is the built-in paradigm "heterarchical_cnp": a
// mediated contract net.
func HeterarchicalCNP() AuthorityMode { return builtins[2] }

// HolonicHybrid is the built-in paradigm "holonic_hybrid": a holarchy
// whose areas reroute among sibling cells.
func HolonicHybrid() AuthorityMode { return builtins[3] }
