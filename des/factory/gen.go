package factory

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// GenSpec sizes a generated plant for scaling studies.
type GenSpec struct {
	Areas, Cells int
	Jobs         int // 0: proportional to cells (as A5C12-1: 40 jobs per 12 cells)
}

// String is the spec's reference, which is also the generated instance's
// name: every parameter given appears in it ("gen:A4C8J7", "gen:A4C8").
func (s GenSpec) String() string {
	if s.Jobs > 0 {
		return fmt.Sprintf("gen:A%dC%dJ%d", s.Areas, s.Cells, s.Jobs)
	}
	return fmt.Sprintf("gen:A%dC%d", s.Areas, s.Cells)
}

var genRef = regexp.MustCompile(`^gen:A(\d+)C(\d+)(?:J(\d+))?$`)

// ParseGenSpec reads "gen:A<areas>C<cells>" with an optional "J<jobs>".
func ParseGenSpec(ref string) (GenSpec, error) {
	m := genRef.FindStringSubmatch(ref)
	if m == nil {
		return GenSpec{}, fmt.Errorf("generator spec %q: want gen:A<areas>C<cells>[J<jobs>], e.g. gen:A16C64", ref)
	}
	var s GenSpec
	for i, dst := range []*int{&s.Areas, &s.Cells, &s.Jobs} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.Atoi(m[i+1])
		if err != nil || n > math.MaxInt32 {
			return GenSpec{}, fmt.Errorf("generator spec %q: %s is too large a number", ref, m[i+1])
		}
		*dst = n
	}
	if m[3] != "" && s.Jobs == 0 {
		return GenSpec{}, fmt.Errorf("generator spec %q: J0: give at least one job, or leave J out for the default", ref)
	}
	return s, nil
}

// Generate builds a plant of spec.Areas areas and spec.Cells cells from the
// station types and products of A5C12-1, so that a generated plant is that
// instance scaled: the same route grammar, station mix, power figures and
// per-cell load. Cells are dealt to areas round-robin in the ratio of the
// A5C12 station mix (7 assembly : 2 load : 2 inspection : 1 recovery); the
// power cap, WIP cap and job count scale with the number of cells.
//
// Generate builds within the default limits; see SizeLimits.Generate.
func Generate(spec GenSpec) (*Instance, error) { return DefaultSizeLimits().Generate(spec) }

// Generate is the package's Generate with the spec and the plant checked
// against l before anything is built.
func (l SizeLimits) Generate(spec GenSpec) (*Instance, error) {
	if spec.Areas < 1 || spec.Cells < spec.Areas {
		return nil, fmt.Errorf("generator: need at least one area and one cell per area (got A%dC%d)", spec.Areas, spec.Cells)
	}
	if err := l.checkSpec(spec); err != nil {
		return nil, err
	}
	base, err := Resolve("A5C12-1")
	if err != nil {
		return nil, err
	}
	var templates []CellSpec
	for _, a := range base.Areas {
		templates = append(templates, a.Cells...)
	}
	// Order the 12 templates so that any prefix of 3 or more covers every
	// operation (C11 loads, inspects and unloads; C04 and C03 assemble).
	order := []int{10, 3, 2, 0, 1, 7, 4, 9, 5, 6, 8, 11}
	scale := float64(spec.Cells) / float64(len(templates))
	in := *base
	in.Name = spec.String()
	in.Profile = "generated for scaling studies"
	in.Description = "A5C12-1 scaled: station types, routes and power figures of A5C12-1, dealt over more areas and cells."
	in.Power.CapKW = base.Power.CapKW * scale
	in.WIPCap = max(1, int(float64(base.WIPCap)*scale+0.5))
	in.Arrivals.Jobs = spec.Jobs
	if in.Arrivals.Jobs == 0 {
		in.Arrivals.Jobs = max(1, int(float64(base.Arrivals.Jobs)*scale+0.5))
	}
	in.Arrivals.MeanInterarrival = base.Arrivals.MeanInterarrival / scale
	in.Arrivals.Initial = min(in.Arrivals.Jobs, int(float64(base.Arrivals.Initial)*scale+0.5))
	in.Horizon = base.Horizon * max(1, scale)
	in.Transport.DockMatrix = nil
	in.Transport.InterMatrix = nil
	in.Areas = make([]AreaSpec, spec.Areas)
	for a := range in.Areas {
		in.Areas[a].ID = fmt.Sprintf("A%d", a+1)
	}
	for c := 0; c < spec.Cells; c++ {
		t := templates[order[c%len(order)]]
		t.ID = fmt.Sprintf("C%02d", c+1)
		a := c % spec.Areas
		in.Areas[a].Cells = append(in.Areas[a].Cells, t)
	}
	in.Limits.MaxDecisions = base.Limits.MaxDecisions * max(1, int(scale+0.5))
	if err := in.resolve(l); err != nil {
		return nil, fmt.Errorf("generator: %v", err)
	}
	return &in, nil
}
