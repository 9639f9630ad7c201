package factory

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// Default limits, used when an instance leaves them at zero.
const (
	DefaultNoProgressSteps = 500
	DefaultMaxDecisions    = 200000
)

// Dispatch rules a cell may use to pick the next waiting job.
var dispatchRules = map[string]bool{"fifo": true, "spt": true, "family": true}

// resolve fills defaults (cell_defaults, limits) in place and validates the
// whole instance within lim, returning the first fault as a *fieldError.
func (in *Instance) resolve(lim SizeLimits) error {
	if in.Format != FormatV1 {
		return bad("format", "want %q (got %q)", FormatV1, in.Format)
	}
	if err := lim.checkSizes(in); err != nil {
		return err
	}
	if err := checkName("name", in.Name); err != nil {
		return err
	}
	if err := checkText("profile", in.Profile); err != nil {
		return err
	}
	if err := checkText("description", in.Description); err != nil {
		return err
	}
	for i, src := range in.Sources {
		if err := checkText(fmt.Sprintf("sources[%d]", i), src); err != nil {
			return err
		}
	}
	if err := positive("time_unit_s", in.TimeUnitS); err != nil {
		return err
	}
	if err := positive("horizon", in.Horizon); err != nil {
		return err
	}
	if err := positive("power.cap_kw", in.Power.CapKW); err != nil {
		return err
	}
	if err := nonNegative("power.carbon_kg_per_kwh", in.Power.CarbonKgPerKWh); err != nil {
		return err
	}
	if err := nonNegative("power.transport_kw", in.Power.TransportKW); err != nil {
		return err
	}
	if in.WIPCap < 1 {
		return bad("wip_cap", "must be at least 1 (got %d)", in.WIPCap)
	}
	if err := in.resolveProducts(); err != nil {
		return err
	}
	if err := in.resolveSetup(); err != nil {
		return err
	}
	if err := in.resolveAreas(); err != nil {
		return err
	}
	if err := lim.checkMachines(in); err != nil {
		return err
	}
	if err := in.resolveTransport(); err != nil {
		return err
	}
	if err := in.checkRoutesFeasible(); err != nil {
		return err
	}
	if err := in.resolveArrivals(); err != nil {
		return err
	}
	if err := nonNegative("due_slack", in.DueSlack); err != nil {
		return err
	}
	if in.ProcessingNoise < 0 || in.ProcessingNoise >= 1 || math.IsNaN(in.ProcessingNoise) {
		return bad("processing_noise", "must be in [0, 1) (got %v)", in.ProcessingNoise)
	}
	if in.Limits.NoProgressSteps < 0 || in.Limits.MaxDecisions < 0 {
		return bad("limits", "must not be negative")
	}
	if in.Limits.NoProgressSteps == 0 {
		in.Limits.NoProgressSteps = DefaultNoProgressSteps
	}
	if in.Limits.MaxDecisions == 0 {
		in.Limits.MaxDecisions = DefaultMaxDecisions
	}
	return in.checkSeeds()
}

func positive(path string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return bad(path, "must be a positive number (got %v)", v)
	}
	return checkValue(path, v)
}

func nonNegative(path string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return bad(path, "must be a non-negative number (got %v)", v)
	}
	return checkValue(path, v)
}

func (in *Instance) families() map[string]bool {
	f := map[string]bool{}
	for _, p := range in.Products {
		f[p.Family] = true
	}
	return f
}

func (in *Instance) resolveProducts() error {
	if len(in.Products) == 0 {
		return bad("products", "at least one product is required")
	}
	seen := map[string]bool{}
	for i, p := range in.Products {
		at := fmt.Sprintf("products[%d]", i)
		if err := checkName(at+".id", p.ID); err != nil {
			return err
		}
		if seen[p.ID] {
			return bad(at+".id", "duplicate product %q", p.ID)
		}
		seen[p.ID] = true
		if err := checkName(at+".family", p.Family); err != nil {
			return err
		}
		if err := nonNegative(at+".slack", p.Slack); err != nil {
			return err
		}
		if err := nonNegative(at+".weight", p.Weight); err != nil {
			return err
		}
		if len(p.Route) == 0 {
			return bad(at+".route", "a route needs at least one operation")
		}
		for k, op := range p.Route {
			if err := checkName(fmt.Sprintf("%s.route[%d].op", at, k), op.Op); err != nil {
				return err
			}
			if err := positive(fmt.Sprintf("%s.route[%d].time", at, k), op.Time); err != nil {
				return err
			}
		}
	}
	return nil
}

func (in *Instance) resolveSetup() error {
	if err := nonNegative("setup.initial", in.Setup.Initial); err != nil {
		return err
	}
	if err := nonNegative("setup.change", in.Setup.Change); err != nil {
		return err
	}
	fams := in.families()
	for _, from := range slices.Sorted(maps.Keys(in.Setup.Matrix)) {
		if !fams[from] {
			return bad("setup.matrix."+from, "unknown product family %q", from)
		}
		for _, to := range slices.Sorted(maps.Keys(in.Setup.Matrix[from])) {
			if !fams[to] {
				return bad("setup.matrix."+from+"."+to, "unknown product family %q", to)
			}
			if err := nonNegative("setup.matrix."+from+"."+to, in.Setup.Matrix[from][to]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (in *Instance) resolveAreas() error {
	if len(in.Areas) == 0 {
		return bad("areas", "at least one area is required")
	}
	d := in.CellDefaults
	if d.ID != "" {
		return bad("cell_defaults.id", "defaults cannot carry an id")
	}
	areaSeen, cellSeen := map[string]bool{}, map[string]bool{}
	for a := range in.Areas {
		area := &in.Areas[a]
		at := fmt.Sprintf("areas[%d]", a)
		if err := checkName(at+".id", area.ID); err != nil {
			return err
		}
		if areaSeen[area.ID] {
			return bad(at+".id", "duplicate area %q", area.ID)
		}
		areaSeen[area.ID] = true
		if len(area.Cells) == 0 {
			return bad(at+".cells", "area %q has no cells", area.ID)
		}
		for c := range area.Cells {
			cell := &area.Cells[c]
			ct := fmt.Sprintf("%s.cells[%d]", at, c)
			if err := checkName(ct+".id", cell.ID); err != nil {
				return err
			}
			if cellSeen[cell.ID] {
				return bad(ct+".id", "duplicate cell %q", cell.ID)
			}
			cellSeen[cell.ID] = true
			if err := cell.fill(d, ct); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill takes every field the cell leaves out from the defaults, then checks
// it. A fault in an inherited value is reported at cell_defaults, where
// the user can fix it.
func (c *CellSpec) fill(d CellSpec, at string) error {
	from := func(field string, inherited bool) string {
		if inherited {
			return "cell_defaults." + field
		}
		return at + "." + field
	}
	inh := map[string]bool{
		"machines": c.Machines == 0, "buffer": c.Buffer == 0, "dispatch": c.Dispatch == "",
		"capabilities": c.Capabilities == nil, "power_kw": c.PowerKW == nil, "mtbf": c.MTBF == nil, "mttr": c.MTTR == nil,
	}
	if inh["machines"] {
		c.Machines = d.Machines
	}
	if inh["buffer"] {
		c.Buffer = d.Buffer
	}
	if inh["dispatch"] {
		c.Dispatch = d.Dispatch
	}
	if inh["capabilities"] {
		c.Capabilities = d.Capabilities
	}
	if inh["power_kw"] {
		c.PowerKW = d.PowerKW
	}
	if inh["mtbf"] {
		c.MTBF = d.MTBF
	}
	if inh["mttr"] {
		c.MTTR = d.MTTR
	}
	if c.Dispatch == "" {
		c.Dispatch = "fifo"
	}
	if c.Machines < 1 {
		return bad(from("machines", inh["machines"] && d.Machines != 0), "a cell needs at least one machine (got %d)", c.Machines)
	}
	if c.Buffer < 1 {
		return bad(from("buffer", inh["buffer"] && d.Buffer != 0), "inbound buffer capacity must be at least 1 (got %d)", c.Buffer)
	}
	if !dispatchRules[c.Dispatch] {
		return bad(from("dispatch", inh["dispatch"]), "unknown dispatch rule %q (want fifo, spt or family)", c.Dispatch)
	}
	if len(c.Capabilities) == 0 {
		return bad(at+".capabilities", "cell %q can do no operation", c.ID)
	}
	for _, op := range slices.Sorted(maps.Keys(c.Capabilities)) {
		if err := checkName(from("capabilities", inh["capabilities"])+"."+op, op); err != nil {
			return err
		}
		if err := positive(from("capabilities", inh["capabilities"])+"."+op, c.Capabilities[op]); err != nil {
			return err
		}
	}
	if c.PowerKW == nil {
		return bad(at+".power_kw", "no power figures (set them on the cell or in cell_defaults)")
	}
	p := c.PowerKW
	for _, f := range []struct {
		k string
		v float64
	}{{"idle", p.Idle}, {"setup", p.Setup}, {"busy", p.Busy}, {"blocked", p.Blocked}, {"down", p.Down}} {
		if err := nonNegative(from("power_kw", inh["power_kw"])+"."+f.k, f.v); err != nil {
			return err
		}
	}
	zero := 0.0
	if c.MTBF == nil {
		c.MTBF = &zero
	}
	if err := nonNegative(from("mtbf", inh["mtbf"]), *c.MTBF); err != nil {
		return err
	}
	if *c.MTBF > 0 {
		if c.MTTR == nil {
			return bad(at+".mttr", "breakdowns are on (mtbf > 0) but mttr is missing")
		}
		if err := positive(from("mttr", inh["mttr"]), *c.MTTR); err != nil {
			return err
		}
	} else if c.MTTR == nil {
		c.MTTR = &zero
	}
	return nil
}

func (in *Instance) resolveTransport() error {
	t := in.Transport
	for _, f := range []struct {
		k string
		v float64
	}{{"transport.intra_area", t.IntraArea}, {"transport.inter_area", t.InterArea}, {"transport.dock", t.Dock}} {
		if err := nonNegative(f.k, f.v); err != nil {
			return err
		}
	}
	areas := map[string]bool{}
	for _, a := range in.Areas {
		areas[a.ID] = true
	}
	for _, from := range slices.Sorted(maps.Keys(t.InterMatrix)) {
		if !areas[from] {
			return bad("transport.inter_matrix."+from, "unknown area %q", from)
		}
		for _, to := range slices.Sorted(maps.Keys(t.InterMatrix[from])) {
			if !areas[to] {
				return bad("transport.inter_matrix."+from+"."+to, "unknown area %q", to)
			}
			if err := nonNegative("transport.inter_matrix."+from+"."+to, t.InterMatrix[from][to]); err != nil {
				return err
			}
		}
	}
	for _, a := range slices.Sorted(maps.Keys(t.DockMatrix)) {
		if !areas[a] {
			return bad("transport.dock_matrix."+a, "unknown area %q", a)
		}
		if err := nonNegative("transport.dock_matrix."+a, t.DockMatrix[a]); err != nil {
			return err
		}
	}
	return nil
}

func (in *Instance) checkRoutesFeasible() error {
	for i, p := range in.Products {
		for k, op := range p.Route {
			capable := false
			for _, a := range in.Areas {
				for _, c := range a.Cells {
					if c.Capabilities[op.Op] > 0 {
						capable = true
					}
				}
			}
			if !capable {
				return bad(fmt.Sprintf("products[%d].route[%d].op", i, k),
					"product %q: no cell can do operation %q", p.ID, op.Op)
			}
		}
	}
	return nil
}

func (in *Instance) resolveArrivals() error {
	ar := &in.Arrivals
	byID := map[string]bool{}
	for _, p := range in.Products {
		byID[p.ID] = true
	}
	needSlack := false
	if len(ar.Orders) > 0 {
		if ar.Jobs != 0 || len(ar.Mix) > 0 || ar.MeanInterarrival != 0 || ar.Initial != 0 {
			return bad("arrivals", "give either orders or a generated stream (jobs, initial, mean_interarrival, mix), not both")
		}
		for i, o := range ar.Orders {
			at := fmt.Sprintf("arrivals.orders[%d]", i)
			if !byID[o.Product] {
				return bad(at+".product", "unknown product %q", o.Product)
			}
			if err := nonNegative(at+".arrival", o.Arrival); err != nil {
				return err
			}
			if err := nonNegative(at+".due", o.Due); err != nil {
				return err
			}
			if o.Due != 0 && o.Due < o.Arrival {
				return bad(at+".due", "due %v is before arrival %v", o.Due, o.Arrival)
			}
			if err := nonNegative(at+".weight", o.Weight); err != nil {
				return err
			}
			if o.Due == 0 {
				needSlack = true
			}
		}
	} else {
		needSlack = true
		if ar.Jobs < 1 {
			return bad("arrivals.jobs", "at least one job is required (got %d)", ar.Jobs)
		}
		if ar.Initial < 0 || ar.Initial > ar.Jobs {
			return bad("arrivals.initial", "must be between 0 and jobs (got %d)", ar.Initial)
		}
		if ar.Initial < ar.Jobs {
			if err := positive("arrivals.mean_interarrival", ar.MeanInterarrival); err != nil {
				return err
			}
		} else if err := nonNegative("arrivals.mean_interarrival", ar.MeanInterarrival); err != nil {
			return err
		}
		sum := 0.0
		for _, id := range slices.Sorted(maps.Keys(ar.Mix)) {
			if !byID[id] {
				return bad("arrivals.mix."+id, "unknown product %q", id)
			}
			if err := nonNegative("arrivals.mix."+id, ar.Mix[id]); err != nil {
				return err
			}
			sum += ar.Mix[id]
		}
		if len(ar.Mix) > 0 && sum <= 0 {
			return bad("arrivals.mix", "weights sum to zero")
		}
	}
	if needSlack {
		if err := positive("due_slack", in.DueSlack); err != nil {
			return err
		}
	}
	return nil
}

func (in *Instance) checkSeeds() error {
	if len(in.Seeds.Test) == 0 {
		return bad("seeds.test", "at least one test seed is required")
	}
	seen := map[uint64]string{}
	for _, split := range []struct {
		name string
		list []uint64
	}{{"test", in.Seeds.Test}, {"dev", in.Seeds.Dev}} {
		name := split.name
		for _, s := range split.list {
			if prev, ok := seen[s]; ok {
				if prev == name {
					return bad("seeds."+name, "seed %d listed twice", s)
				}
				return bad("seeds.dev", "seed %d is in both test and dev", s)
			}
			seen[s] = name
		}
	}
	return nil
}
