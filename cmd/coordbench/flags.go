package main

import (
	"fmt"
	"strconv"

	"github.com/coordbench/coordbench/internal/seeds"
)

// seedValue is a seed flag (pflag.Value): a whole number from 0 to 2^64-1,
// with an error that says so rather than strconv's.
type seedValue uint64

func (v *seedValue) String() string { return strconv.FormatUint(uint64(*v), 10) }
func (v *seedValue) Type() string   { return "uint" }
func (v *seedValue) Set(s string) error {
	n, err := seeds.Parse(s)
	if err != nil {
		return err
	}
	*v = seedValue(n)
	return nil
}

// onlyWith refuses the flags that choose a model (--llm-model,
// --llm-base-url) when the command runs no model: ok is whether it does,
// why says why not ("--controller is not llm").
func (f *modelFlags) onlyWith(ok bool, why string) error {
	if ok || (f.model == "" && f.baseURL == "") {
		return nil
	}
	return fmt.Errorf("--llm-model/--llm-base-url given, but %s: drop them, or run a model", why)
}
