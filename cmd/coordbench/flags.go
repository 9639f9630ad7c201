package main

import (
	"fmt"
	"strconv"

	"github.com/coordbench/coordbench/internal/seeds"
	"github.com/coordbench/coordbench/suiterun"
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

// checkWorkers checks a --workers value: 1 to suiterun.MaxWorkers cases
// at once.
func checkWorkers(n int) error {
	if n < 1 || n > suiterun.MaxWorkers {
		return fmt.Errorf("--workers: want 1 to %d cases at once (got %d)", suiterun.MaxWorkers, n)
	}
	return nil
}
