package factory

import (
	"math"
)

// MachineState is the physical state of one machine.
type MachineState uint8

// Machine states; each has its own power draw.
const (
	Idle MachineState = iota
	Setup
	Busy
	Blocked
	Down
	numStates
)

var stateNames = [...]string{"idle", "setup", "busy", "blocked", "down"}

func (s MachineState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Plant is a compiled instance: names resolved to dense indices, every
// lookup the engine needs precomputed. It is read-only and safe to share
// between concurrently running engines.
type Plant struct {
	Inst     *Instance
	Areas    []Area
	Cells    []Cell
	Ops      []string // operation types; a RouteOp's Type indexes this
	Families []string
	Products []ProductType
	Machines int // total machine count

	transport [][]float64 // [from cell][to cell]
	dock      []float64   // [to cell] from the plant dock
	setup     [][]float64 // [1+from family or 0 for a clean machine][to family]
	capWatts  int64
	transW    int64
	cellField []string    // [cell] its trace field, `,"cell":"<id>"` (Record.appendFields)
	cellWords []textWords // [cell] the same as words (TraceEncoder)
}

// Area is one area and the indices of its cells.
type Area struct {
	ID    string
	Cells []int
}

// Cell is a compiled cell.
type Cell struct {
	ID           string
	Area         int
	Machines     int
	FirstMachine int // global index of machine 0
	Buffer       int
	Dispatch     string
	Factor       []float64 // per operation type; 0 = incapable
	PowerW       [numStates]int64
	MTBF, MTTR   float64
}

// ProductType is a compiled product.
type ProductType struct {
	ID     string
	Family int
	Route  []RouteOp
	Work   float64 // total base time of the route
	Slack  float64
	Weight float64
}

// RouteOp is one operation of a route.
type RouteOp struct {
	Type int
	Base float64
}

// Capable reports whether cell c can perform operation type op.
func (p *Plant) Capable(c, op int) bool { return p.Cells[c].Factor[op] > 0 }

// ProcTime is the nominal time of a base-time operation of type op on cell c.
func (p *Plant) ProcTime(c, op int, base float64) float64 { return base * p.Cells[c].Factor[op] }

// TransportTime from cell `from` (or the dock when from < 0) to cell `to`.
func (p *Plant) TransportTime(from, to int) float64 {
	if from < 0 {
		return p.dock[to]
	}
	return p.transport[from][to]
}

// SetupTime for a machine last set up for family `from` (-1: never) to
// process family `to`.
func (p *Plant) SetupTime(from, to int) float64 { return p.setup[from+1][to] }

// CapKW is the plant power cap.
func (p *Plant) CapKW() float64 { return float64(p.capWatts) / 1000 }

func watts(kw float64) int64 { return int64(math.Round(kw * 1000)) }

// Compile resolves an instance (already validated by Parse) into a Plant.
func Compile(in *Instance) *Plant {
	p := &Plant{Inst: in, capWatts: watts(in.Power.CapKW), transW: watts(in.Power.TransportKW)}
	opIdx := map[string]int{}
	famIdx := map[string]int{}
	for _, pr := range in.Products {
		if _, ok := famIdx[pr.Family]; !ok {
			famIdx[pr.Family] = len(p.Families)
			p.Families = append(p.Families, pr.Family)
		}
		for _, op := range pr.Route {
			if _, ok := opIdx[op.Op]; !ok {
				opIdx[op.Op] = len(p.Ops)
				p.Ops = append(p.Ops, op.Op)
			}
		}
	}
	for _, pr := range in.Products {
		pt := ProductType{ID: pr.ID, Family: famIdx[pr.Family], Slack: pr.Slack, Weight: pr.Weight}
		if pt.Slack == 0 {
			pt.Slack = in.DueSlack
		}
		if pt.Weight == 0 {
			pt.Weight = 1
		}
		for _, op := range pr.Route {
			pt.Route = append(pt.Route, RouteOp{Type: opIdx[op.Op], Base: op.Time})
			pt.Work += op.Time
		}
		p.Products = append(p.Products, pt)
	}
	areaIdx := map[string]int{}
	for a, as := range in.Areas {
		areaIdx[as.ID] = a
		area := Area{ID: as.ID}
		for _, cs := range as.Cells {
			c := Cell{
				ID: cs.ID, Area: a, Machines: cs.Machines, FirstMachine: p.Machines,
				Buffer: cs.Buffer, Dispatch: cs.Dispatch, Factor: make([]float64, len(p.Ops)),
				MTBF: *cs.MTBF, MTTR: *cs.MTTR,
			}
			for op, f := range cs.Capabilities {
				if i, ok := opIdx[op]; ok {
					c.Factor[i] = f
				}
			}
			pw := cs.PowerKW
			c.PowerW = [numStates]int64{watts(pw.Idle), watts(pw.Setup), watts(pw.Busy), watts(pw.Blocked), watts(pw.Down)}
			area.Cells = append(area.Cells, len(p.Cells))
			p.Cells = append(p.Cells, c)
			p.Machines += c.Machines
		}
		p.Areas = append(p.Areas, area)
	}
	tr := in.Transport
	n := len(p.Cells)
	p.transport = make([][]float64, n)
	p.dock = make([]float64, n)
	for i := range p.Cells {
		p.transport[i] = make([]float64, n)
		ai := in.Areas[p.Cells[i].Area].ID
		p.dock[i] = tr.Dock
		if v, ok := tr.DockMatrix[ai]; ok {
			p.dock[i] = v
		}
		for j := range p.Cells {
			aj := in.Areas[p.Cells[j].Area].ID
			switch {
			case i == j:
				p.transport[i][j] = 0
			case ai == aj:
				p.transport[i][j] = tr.IntraArea
			default:
				p.transport[i][j] = tr.InterArea
				if v, ok := tr.InterMatrix[ai][aj]; ok {
					p.transport[i][j] = v
				}
			}
		}
	}
	nf := len(p.Families)
	p.setup = make([][]float64, nf+1)
	for from := -1; from < nf; from++ {
		row := make([]float64, nf)
		for to := 0; to < nf; to++ {
			switch {
			case from < 0:
				row[to] = in.Setup.Initial
			case from == to:
				row[to] = 0
			default:
				row[to] = in.Setup.Change
				if v, ok := in.Setup.Matrix[p.Families[from]][p.Families[to]]; ok {
					row[to] = v
				}
			}
		}
		p.setup[from+1] = row
	}
	for _, c := range p.Cells {
		p.cellField = append(p.cellField, `,"cell":"`+c.ID+`"`)
		p.cellWords = append(p.cellWords, makeTextWords(p.cellField[len(p.cellField)-1]))
	}
	return p
}
