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
type plantLimits struct{ lim factory.SizeLimits }

// addPlantLimits registers --plant-limit on f.
func addPlantLimits(f *pflag.FlagSet) *plantLimits {
	p := &plantLimits{lim: factory.DefaultSizeLimits()}
	p.lim.Raise = "--plant-limit %s=%d"
	f.Var(p, "plant-limit", "raise a plant size limit, NAME=N (repeatable, or a comma list); see docs/instance-format.md")
	return p
}

func (p *plantLimits) Set(s string) error {
	for _, item := range strings.Split(s, ",") {
		if err := p.lim.Set(item); err != nil {
			return fmt.Errorf("%v (the limits are %s)", err, factory.DefaultSizeLimits())
		}
	}
	return nil
}

func (p *plantLimits) String() string { return p.lim.String() }
func (p *plantLimits) Type() string   { return "NAME=N" }
