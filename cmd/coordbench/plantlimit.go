package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/des/factory"
)

// plantLimits is the --plant-limit flag of the commands that load
// instances: the factory.SizeLimits every instance must fit in, each
// raised by NAME=N (repeatable, or a comma list).
type plantLimits struct{ lim, base factory.SizeLimits }

// addPlantLimits registers --plant-limit on f, over the default limits.
func addPlantLimits(f *pflag.FlagSet) *plantLimits {
	base := factory.DefaultSizeLimits()
	base.Raise = "--plant-limit %s=%d"
	return addPlantLimitsFrom(f, base)
}

// addPlantLimitsFrom registers --plant-limit on f, over base (whose Raise
// names the flag).
func addPlantLimitsFrom(f *pflag.FlagSet, base factory.SizeLimits) *plantLimits {
	p := &plantLimits{lim: base, base: base}
	f.Var(p, "plant-limit", "raise a plant size limit, NAME=N (repeatable, or a comma list); see docs/instance-format.md")
	return p
}

func (p *plantLimits) Set(s string) error {
	for _, item := range strings.Split(s, ",") {
		if err := p.lim.Set(item); err != nil {
			return fmt.Errorf("%v (the limits are %s)", err, p.base)
		}
	}
	return nil
}

func (p *plantLimits) String() string { return p.lim.String() }
func (p *plantLimits) Type() string   { return "NAME=N" }
