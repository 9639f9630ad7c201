package factory

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/inputfile"
)

// SizeLimits bound the plant an instance may describe, so that no file
// or generator spec can make the process allocate without bound. Each
// is checked before the structure it sizes is allocated (the generator
// checks its spec before building; a file is bounded by MaxFileBytes
// while it is decoded, then by these before Compile and the engine
// allocate per cell, machine and job). docs/instance-format.md lists
// them; the CLI raises them with --plant-limit, the HTTP server keeps
// the defaults.
type SizeLimits struct {
	Areas      int // areas
	Cells      int // cells in all (the transport table is cells × cells)
	Machines   int // machines in all cells
	Jobs       int // arrivals.jobs, or orders in the order book
	Products   int // product types
	Route      int // operations in one product's route
	Operations int // distinct operation types (each cell has a factor per type)

	// Raise, if set, names how a user raises a limit, as a format with
	// the limit's name and the value needed: "--plant-limit %s=%d". Empty:
	// the limits are fixed (the HTTP server).
	Raise string
}

// DefaultSizeLimits are the documented limits: far above the reported
// instances (at most 5 areas, 12 cells, 40 jobs) and the scaling studies,
// small enough that an episode at every limit at once fits in a few
// hundred megabytes.
func DefaultSizeLimits() SizeLimits {
	return SizeLimits{Areas: 256, Cells: 1024, Machines: 8192, Jobs: 100_000, Products: 256, Route: 64, Operations: 256}
}

// MaxValue bounds every real number of an instance (times, factors,
// power, weights): sums and products of such values over the bounded
// sizes stay finite, so no derived time or cost becomes +Inf.
const MaxValue = 1e12

// MaxNameBytes bounds a name or id (the instance name, area, cell and
// product ids, families, operation types).
const MaxNameBytes = 128

// limitNames are the names --plant-limit takes, in documentation order.
var limitNames = []string{"areas", "cells", "machines", "jobs", "products", "route", "operations"}

func (l *SizeLimits) field(name string) *int {
	switch name {
	case "areas":
		return &l.Areas
	case "cells":
		return &l.Cells
	case "machines":
		return &l.Machines
	case "jobs":
		return &l.Jobs
	case "products":
		return &l.Products
	case "route":
		return &l.Route
	case "operations":
		return &l.Operations
	}
	return nil
}

// Set reads one "name=value" setting (a --plant-limit value), e.g.
// "cells=4096".
func (l *SizeLimits) Set(setting string) error {
	name, val, ok := strings.Cut(setting, "=")
	p := l.field(strings.TrimSpace(name))
	if !ok || p == nil {
		return fmt.Errorf("%q: want NAME=N with NAME one of %s", setting, strings.Join(limitNames, ", "))
	}
	n, err := strconv.Atoi(strings.TrimSpace(val))
	if err != nil || n < 1 {
		return fmt.Errorf("%q: the limit must be a positive integer", setting)
	}
	*p = n
	return nil
}

// String lists the limits as "areas=256,cells=1024,...".
func (l SizeLimits) String() string {
	parts := make([]string, len(limitNames))
	for i, name := range limitNames {
		parts[i] = fmt.Sprintf("%s=%d", name, *l.field(name))
	}
	return strings.Join(parts, ",")
}

// over reports a count beyond the named limit, at field path (a file) or
// for the generator spec (path "").
func (l SizeLimits) over(path, name string, got int64) error {
	max := int64(*l.field(name))
	if got <= max {
		return nil
	}
	how := "this limit is fixed here"
	if l.Raise != "" {
		how = "raise it with " + fmt.Sprintf(l.Raise, name, got)
	}
	noun := map[string]string{"route": "operations in one route", "operations": "distinct operation types"}[name]
	if noun == "" {
		noun = name
	}
	msg := fmt.Sprintf("%d %s: over the limit of %d (%s; docs/instance-format.md)", got, noun, max, how)
	if path == "" {
		return fmt.Errorf("%s", msg)
	}
	return bad(path, "%s", msg)
}

// checkSpec bounds a generator spec before anything is built.
func (l SizeLimits) checkSpec(s GenSpec) error {
	for _, c := range []struct {
		name string
		n    int
	}{{"areas", s.Areas}, {"cells", s.Cells}, {"jobs", s.Jobs}} {
		if err := l.over("", c.name, int64(c.n)); err != nil {
			return fmt.Errorf("generator spec %s: %v", s, err)
		}
	}
	return nil
}

// checkSizes bounds a decoded instance before anything is sized by it.
func (l SizeLimits) checkSizes(in *Instance) error {
	if err := l.over("areas", "areas", int64(len(in.Areas))); err != nil {
		return err
	}
	cells := 0
	for _, a := range in.Areas {
		cells += len(a.Cells)
	}
	if err := l.over("areas", "cells", int64(cells)); err != nil {
		return err
	}
	if err := l.over("products", "products", int64(len(in.Products))); err != nil {
		return err
	}
	var ops []string
	for i, p := range in.Products {
		if err := l.over(fmt.Sprintf("products[%d].route", i), "route", int64(len(p.Route))); err != nil {
			return err
		}
		for _, op := range p.Route {
			if !slices.Contains(ops, op.Op) {
				ops = append(ops, op.Op)
				if err := l.over("products", "operations", int64(len(ops))); err != nil {
					return err
				}
			}
		}
	}
	if len(in.Arrivals.Orders) > 0 {
		return l.over("arrivals.orders", "jobs", int64(len(in.Arrivals.Orders)))
	}
	return l.over("arrivals.jobs", "jobs", int64(in.Arrivals.Jobs))
}

// checkMachines bounds the machines once cells have their defaults.
func (l SizeLimits) checkMachines(in *Instance) error {
	var n int64
	for _, a := range in.Areas {
		for _, c := range a.Cells {
			n += int64(c.Machines) // each at most MaxInt: no overflow over the bounded cells
		}
	}
	return l.over("areas", "machines", n)
}

// checkName refuses an empty name, one longer than MaxNameBytes, and
// control or format characters (escape sequences, bidirectional
// overrides) that would reach terminals and logs.
func checkName(path, s string) error {
	if s == "" {
		return bad(path, "must not be empty")
	}
	if len(s) > MaxNameBytes {
		return bad(path, "longer than %d bytes", MaxNameBytes)
	}
	if r, ok := inputfile.ControlChar(s, false); ok {
		return bad(path, "contains %U, a control or invisible character; use printable characters", r)
	}
	return nil
}

// checkText refuses control characters other than newline and tab in
// free text (profile, description, sources).
func checkText(path, s string) error {
	if r, ok := inputfile.ControlChar(s, true); ok {
		return bad(path, "contains %U, a control character; use printable characters (newlines and tabs are allowed)", r)
	}
	return nil
}

// checkValue refuses a number that is NaN, infinite or beyond MaxValue.
func checkValue(path string, v float64) error {
	if math.IsNaN(v) || math.Abs(v) > MaxValue {
		return bad(path, "must be a number of magnitude at most %g (got %v)", MaxValue, v)
	}
	return nil
}
