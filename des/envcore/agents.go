// Package envcore holds what every transport of the learning environment
// shares (the HTTP server des/envserver and the unix-socket server
// des/envsock): the agents a paradigm may activate, the plant layout, the
// progress tally behind per-step rewards, and the flat observation vector
// of each agent (docs/python-env.md). It does no I/O.
package envcore

import (
	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
)

// AgentIDs lists the agents paradigm m may activate on plant p, in a fixed
// order: the plant; the areas when a mode delegates to them; the cells
// when they bid or may reject (payload.md, "Agents and roles"); the
// mode_selector when an agent chooses each work item's mode. Under an
// adaptive paradigm, these are the agents of every mode it may route a
// work item with.
func AgentIDs(p *factory.Plant, m coord.AuthorityMode) []string {
	var areas, cells bool
	for _, r := range routingModes(m) {
		areas = areas || r.RoutingAuthorityMode == coord.RoutingHierarchical || r.RoutingAuthorityMode == coord.RoutingHolonic
		cells = cells || r.MediatedBidRoundEnabled || r.CellContractActions == coord.AcceptReject || r.RoutingAuthorityMode == coord.RoutingCNP
	}
	ids := []string{"plant"}
	if areas {
		for _, a := range p.Areas {
			ids = append(ids, "area:"+a.ID)
		}
	}
	if cells {
		for _, c := range p.Cells {
			ids = append(ids, "cell:"+c.ID)
		}
	}
	if m.Adaptive != nil && m.Adaptive.ByAgent() {
		ids = append(ids, coord.AgentModeSelector)
	}
	return ids
}

// routingModes lists the switch sets that may route a work item under m:
// m itself when it is static; for an adaptive paradigm with rules, its own
// switches and every mode its rules name; with an agent selector, the
// modes it offers.
func routingModes(m coord.AuthorityMode) []coord.AuthorityMode {
	if m.Adaptive == nil {
		return []coord.AuthorityMode{m}
	}
	var ids []string
	if m.Adaptive.ByAgent() {
		ids = m.Adaptive.Offer
	} else {
		ids = append(ids, m.ID)
		for _, r := range m.Adaptive.Rules {
			ids = append(ids, r.Mode)
		}
	}
	var out []coord.AuthorityMode
	for _, id := range ids {
		if sub, ok := namedMode(m, id); ok {
			out = append(out, sub)
		}
	}
	return out
}

// namedMode finds the switch set an adaptive paradigm m names id: its own
// switches, one of its modes, or a built-in paradigm.
func namedMode(m coord.AuthorityMode, id string) (coord.AuthorityMode, bool) {
	if id == m.ID {
		own := m
		own.Adaptive = nil
		return own, true
	}
	for _, sub := range m.Adaptive.Modes {
		if sub.ID == id {
			return sub, true
		}
	}
	b, err := new(coord.Paradigms).Lookup(id)
	return b, err == nil && b.Adaptive == nil
}

// OfferedModes lists the mode ids an agent selector chooses among under
// m (the episode status's offer), none for a paradigm without one.
func OfferedModes(m coord.AuthorityMode) []string {
	if m.Adaptive == nil || !m.Adaptive.ByAgent() {
		return nil
	}
	return m.Adaptive.Offer
}
