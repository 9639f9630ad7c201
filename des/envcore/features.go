package envcore

import (
	"fmt"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
)

// The flat observation vector of an agent, as python/coordbench_env's
// features.encode builds it from the agent's JSON view: the feature list is
// in docs/python-env.md ("Observations"). Its length depends only on the
// agent's role and the plant's layout (and, for the mode selector, on the
// modes offered). Every value is a raw payload figure, not normalized; an
// inactive agent's vector is all zeros. The two must stay equal, value for
// value: python/tests/transport_socket.py compares them over the two
// transports.

// Kinds are the decision kinds of the one-hot block, in order.
var Kinds = [...]string{coord.KindRelease, coord.KindSelectArea, coord.KindSelectCell, coord.KindAward, coord.KindReroute,
	coord.KindPlantFallback, coord.KindBid, coord.KindCommit, coord.KindSelectMode}

// actionCodes are the option actions; an option's code is 1 + its index.
var actionCodes = [...]string{coord.ActRelease, coord.ActDefer, coord.ActAllocate, coord.ActAssign, coord.ActBid,
	coord.ActDecline, coord.ActAccept, coord.ActReject, coord.ActEscalate, coord.ActMode}

var routings = [...]string{"centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid"}

// Block sizes of the vector.
const (
	common    = len(Kinds) + 4 // kind one-hot, active, time, power_headroom_kw, legal count
	workItem  = 6              // present, op, ops, base_time, slack, due − time
	plantLen  = 8              // power_kw, power_cap_kw, wip, wip_cap, backlog, completed, jobs, in_transit
	plantArea = 6              // busy, down, blocked, free_slots, backlog, power_kw
	areaCell  = 9              // machines, idle, busy, blocked, down, waiting, free_slots, backlog, power_kw
	cellLen   = 13             // machines, waiting, incoming, buffer, free_slots, blocked_for_admission, backlog, power_kw, 5 machine states
	optionLen = 7              // legal, action code, five option features
)

// Shape is the observation and action space of one agent on one plant.
type Shape struct {
	Agent string
	// Actions is the size of the agent's action space: the most options
	// its role can be offered on this plant (its mask's length).
	Actions int
	// Length is the length of its observation vector.
	Length int

	role   string
	layout []AreaLayout
	cells  []string // an area's cells, in layout order
}

// NewShape is agent's shape on a plant of the given layout; offer is the
// episode's offer (the mode selector's options).
func NewShape(agent string, layout []AreaLayout, offer []string) (Shape, error) {
	role, name, _ := strings.Cut(agent, ":")
	s := Shape{Agent: agent, role: role, layout: layout}
	plant := plantLen + plantArea*len(layout)
	switch role {
	case coord.AgentModeSelector:
		s.Actions = len(offer)
		s.Length = len(coord.ModeFeatures()) + plant
	case coord.RolePlant:
		cells := 0
		for _, a := range layout {
			cells += len(a.Cells)
		}
		s.Actions = max(9, cells+1, len(layout)) // 8 jobs + defer; every cell + decline
		s.Length = plant
	case coord.RoleArea:
		found := false
		for _, a := range layout {
			if a.Area == name {
				s.cells, found = a.Cells, true
				break
			}
		}
		if !found {
			return Shape{}, fmt.Errorf("no area %q in the plant layout", name)
		}
		s.Actions = len(s.cells) + 1 // its cells + escalate
		s.Length = 1 + areaCell*len(s.cells)
	default:
		s.Actions = 4 // bid high/medium/low/decline; accept/reject
		s.Length = cellLen
	}
	s.Length += common + workItem + optionLen*s.Actions
	return s, nil
}

// Encode writes the agent's vector for view v at simulation time now into
// dst[:s.Length]; v nil (an inactive agent) gives zeros. Options beyond
// Actions are left out (a transport refuses such a view first).
func (s *Shape) Encode(dst []float64, v *coord.View, now float64) {
	dst = dst[:s.Length]
	clear(dst)
	if v == nil {
		return
	}
	k := 0
	put := func(x float64) { dst[k] = x; k++ }
	for _, kind := range Kinds {
		put(one(v.Kind == kind))
	}
	legal := distinct(v.LegalActions)
	obs := &v.Observation
	put(1)
	put(now)
	put(obs.HeadroomKW)
	put(float64(legal))
	if wi := v.Context.WorkItem; wi != nil {
		put(1)
		put(float64(wi.Op))
		put(float64(wi.Ops))
		put(wi.Base)
		put(wi.Slack)
		put(wi.Due - now)
	} else {
		k += workItem
	}
	switch s.role {
	case coord.AgentModeSelector:
		ms := v.Context.ModeState
		for _, f := range coord.ModeFeatures() {
			if ms != nil {
				x, _ := ms.Feature(f)
				put(x)
			} else {
				put(0)
			}
		}
		k = s.plantBlock(dst, k, obs.Plant)
	case coord.RolePlant:
		k = s.plantBlock(dst, k, obs.Plant)
	case coord.RoleArea:
		a := obs.Area
		if a != nil {
			put(a.PowerKW)
		} else {
			k++
		}
		for _, id := range s.cells {
			var c *coord.CellSummary
			if a != nil {
				for i := range a.Cells {
					if a.Cells[i].Cell == id {
						c = &a.Cells[i]
						break
					}
				}
			}
			if c == nil {
				k += areaCell
				continue
			}
			for _, x := range [areaCell]float64{float64(c.Machines), float64(c.Idle), float64(c.Busy), float64(c.Blocked),
				float64(c.Down), float64(c.Waiting), float64(c.FreeSlots), c.Backlog, c.PowerKW} {
				put(x)
			}
		}
	default:
		if c := obs.Cell; c != nil {
			n := c.CountMachines()
			machines := float64(len(c.Machines))
			if len(c.Machines) == 0 {
				machines = float64(n.Total())
			}
			for _, x := range [cellLen]float64{machines, float64(c.Waiting), float64(c.Incoming), float64(c.Buffer),
				float64(c.FreeSlots), float64(c.AdmitQueue), c.Backlog, c.PowerKW,
				float64(n.Idle), float64(n.Setup), float64(n.Busy), float64(n.Blocked), float64(n.Down)} {
				put(x)
			}
		} else {
			k += cellLen
		}
	}
	for i := 0; i < s.Actions && i < len(v.Options); i++ {
		o := &v.Options[i]
		put(one(isLegal(v.LegalActions, i)))
		put(actionCode(o.Action))
		optionFeatures(dst[k:k+5], o, now)
		k += 5
	}
}

// plantBlock writes the plant figures and, per area in layout order, its
// summary (zeros for an area the observation does not list).
func (s *Shape) plantBlock(dst []float64, k int, p *coord.PlantObservation) int {
	if p == nil {
		return k + plantLen + plantArea*len(s.layout)
	}
	for _, x := range [plantLen]float64{p.PowerKW, p.CapKW, float64(p.WIP), float64(p.WIPCap), float64(p.Backlog),
		float64(p.Completed), float64(p.Jobs), float64(p.InTransit)} {
		dst[k] = x
		k++
	}
	for _, al := range s.layout {
		for i := range p.Areas {
			if a := &p.Areas[i]; a.Area == al.Area {
				copy(dst[k:], []float64{float64(a.Busy), float64(a.Down), float64(a.Blocked), float64(a.FreeSlots), a.Backlog, a.PowerKW})
				break
			}
		}
		k += plantArea
	}
	return k
}

// optionFeatures writes the five numbers describing option o
// (docs/python-env.md, "Option features") into dst[:5], zeroed.
func optionFeatures(dst []float64, o *coord.Option, now float64) {
	switch o.Action {
	case coord.ActRelease:
		var work, due float64
		if o.Job != nil {
			work, due = o.Job.Work, o.Job.Due
		}
		dst[0], dst[1] = work, due-now
	case coord.ActAllocate:
		if a := o.Area; a != nil {
			dst[0], dst[1], dst[2], dst[3], dst[4] = a.MinProcTime, a.TransportTime, float64(a.FreeSlots), a.Backlog, float64(a.Down)
		}
	case coord.ActAssign:
		if c := o.Cell; c != nil {
			dst[0], dst[1], dst[2], dst[3], dst[4] = c.ProcTime, c.TransportTime, float64(c.FreeSlots), c.Backlog, bidLevel(c.Bid)
		}
	case coord.ActBid:
		dst[0] = bidLevel(o.Bid)
	case coord.ActMode:
		if m := o.Mode; m != nil {
			for i, r := range routings {
				dst[i] = one(m.RoutingAuthorityMode == r)
			}
			dst[4] = one(m.CellContractActions == "accept_reject")
		}
	}
}

func bidLevel(b string) float64 {
	switch b {
	case "high":
		return 3
	case "medium":
		return 2
	case "low":
		return 1
	}
	return 0
}

func actionCode(a string) float64 {
	for i, c := range actionCodes {
		if c == a {
			return float64(i + 1)
		}
	}
	return 0
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func isLegal(legal []int, i int) bool {
	for _, l := range legal {
		if l == i {
			return true
		}
	}
	return false
}

// distinct counts the distinct entries of legal (the Python side counts a
// set).
func distinct(legal []int) int {
	n := 0
	for i, l := range legal {
		if !isLegal(legal[:i], l) {
			n++
		}
	}
	return n
}
