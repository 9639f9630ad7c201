package main

import (
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
