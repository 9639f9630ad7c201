package envserver

import (
	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
)

// agentIDs lists the agents paradigm m may activate on plant p, in a fixed
// order: the plant; the areas when a mode delegates to them; the cells
// when they bid or may reject (payload.md, "Agents and roles"). Under an
// adaptive paradigm, these are the agents of every mode it may route a
// work item with.
func agentIDs(p *factory.Plant, m coord.AuthorityMode) []string {
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
	return ids
}

// routingModes lists the switch sets that may route a work item under m:
// m itself when it is static; for an adaptive paradigm, its own switches
// and every mode its rules name.
func routingModes(m coord.AuthorityMode) []coord.AuthorityMode {
	if m.Adaptive == nil {
		return []coord.AuthorityMode{m}
	}
	own := m
	own.Adaptive = nil
	out := []coord.AuthorityMode{own}
	for _, r := range m.Adaptive.Rules {
		if sub, ok := namedMode(m, r.Mode); ok {
			out = append(out, sub)
		}
	}
	return out
}

// namedMode finds the switch set an adaptive paradigm m names id: one of
// its own modes, or a built-in paradigm. (m's own id is its own switches,
// which routingModes lists anyway.)
func namedMode(m coord.AuthorityMode, id string) (coord.AuthorityMode, bool) {
	for _, sub := range m.Adaptive.Modes {
		if sub.ID == id {
			return sub, true
		}
	}
	b, err := new(coord.Paradigms).Lookup(id)
	return b, err == nil && b.Adaptive == nil
}

// offeredModes lists the mode ids an agent selector chooses among under
// m (Status.Offer), none for a paradigm without one.
func offeredModes(m coord.AuthorityMode) []string {
	return nil
}
