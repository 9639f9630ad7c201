package coord

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// AuthorityMode is a coordination paradigm as data: the switches that fix
// who routes work, what a cell may answer, and how failures are recovered.
// The engine never changes with the mode; only activations, legal actions
// and protocol messages do.
type AuthorityMode struct {
	ID string `json:"mode_id" yaml:"mode_id"`
	// RoutingAuthorityMode: "centralized" (the plant picks the cell),
	// "hierarchical" (plant → area → cell), "heterarchical_cnp" (mediated
	// contract net) or "holonic_hybrid".
	RoutingAuthorityMode string `json:"routing_authority_mode" yaml:"routing_authority_mode"`
	// CellContractActions: "accept_only" or "accept_reject".
	CellContractActions     string `json:"cell_contract_actions" yaml:"cell_contract_actions"`
	AreaLocalRerouteEnabled bool   `json:"area_local_reroute_enabled" yaml:"area_local_reroute_enabled"`
	PlantRerouteRequired    bool   `json:"plant_reroute_required" yaml:"plant_reroute_required"`
	MediatedBidRoundEnabled bool   `json:"mediated_bid_round_enabled" yaml:"mediated_bid_round_enabled"`
	Description             string `json:"description,omitempty" yaml:"description,omitempty"`
}

// Routing authority modes this interpreter implements.
var supportedRouting = map[string]bool{"centralized": true}

// Validate reports an invalid or unsupported combination of switches.
func (m AuthorityMode) Validate() error {
	if m.ID == "" {
		return fmt.Errorf("authority mode: mode_id must not be empty")
	}
	if !supportedRouting[m.RoutingAuthorityMode] {
		return fmt.Errorf("authority mode %q: routing_authority_mode %q is not supported (have: %v)",
			m.ID, m.RoutingAuthorityMode, slices.Sorted(maps.Keys(supportedRouting)))
	}
	switch m.CellContractActions {
	case "accept_only", "accept_reject":
	default:
		return fmt.Errorf("authority mode %q: cell_contract_actions must be accept_only or accept_reject (got %q)",
			m.ID, m.CellContractActions)
	}
	if m.RoutingAuthorityMode == "centralized" {
		if m.CellContractActions != "accept_only" || m.AreaLocalRerouteEnabled || m.MediatedBidRoundEnabled {
			return fmt.Errorf("authority mode %q: centralized routing has accept-only cells, no area rerouting and no bid round", m.ID)
		}
	}
	return nil
}

var (
	regMu    sync.RWMutex
	registry = map[string]AuthorityMode{}
)

// RegisterAuthorityMode adds a paradigm under its ID; it fails on an
// invalid mode or a taken ID.
func RegisterAuthorityMode(m AuthorityMode) error {
	if err := m.Validate(); err != nil {
		return err
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[m.ID]; dup {
		return fmt.Errorf("authority mode %q is already registered", m.ID)
	}
	registry[m.ID] = m
	return nil
}

// LookupAuthorityMode finds a registered paradigm.
func LookupAuthorityMode(id string) (AuthorityMode, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	m, ok := registry[id]
	if !ok {
		return AuthorityMode{}, fmt.Errorf("unknown paradigm %q (have: %v)", id, slices.Sorted(maps.Keys(registry)))
	}
	return m, nil
}

// AuthorityModes lists registered paradigms by ID.
func AuthorityModes() []AuthorityMode {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]AuthorityMode, 0, len(registry))
	for _, id := range slices.Sorted(maps.Keys(registry)) {
		out = append(out, registry[id])
	}
	return out
}

// Centralized is the built-in centralized paradigm: the plant releases
// jobs and picks the execution cell of every work item; cells accept.
var Centralized = AuthorityMode{
	ID:                   "centralized",
	RoutingAuthorityMode: "centralized",
	CellContractActions:  "accept_only",
	PlantRerouteRequired: true,
	Description:          "plant picks the cell directly; accept-only cells; plant reselects on failure",
}

func init() {
	if err := RegisterAuthorityMode(Centralized); err != nil {
		panic(err) // a built-in mode is invalid: a programming error caught by every test
	}
}
