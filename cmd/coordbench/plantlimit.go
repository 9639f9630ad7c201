package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
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

// resume makes a suite resumed in dir run under the plant limits its
// suite.json records, so that they need not be given again: without
// --plant-limit (given says whether it was) the recorded limits are
// used; a --plant-limit that differs from them is refused by name,
// unless force (the suite is replaced). A dir without suite.json
// changes nothing.
func (p *plantLimits) resume(dir string, given, force bool) error {
	if _, err := os.Lstat(filepath.Join(dir, harness.FileSuiteConfig)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	cfg, err := harness.ReadSuiteConfig(dir)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	rec, err := harness.RecordedLimits(cfg, p.lim.Raise)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if !given {
		p.lim = rec
		return nil
	}
	if got := harness.ChangedLimits(p.lim); got != cfg.PlantLimits && !force {
		recorded := cfg.PlantLimits
		if recorded == "" {
			recorded = "none (the defaults)"
		}
		return fmt.Errorf("--plant-limit %s conflicts with the plant limits %s records: %s; drop --plant-limit to resume under those, or give --force to replace the suite",
			got, filepath.Join(dir, harness.FileSuiteConfig), recorded)
	}
	return nil
}
