// Package seeds reads seeds and seed lists the same way for both
// benchmarks: a seed is a whole number from 0 to 2^64-1, a list is comma
// separated and may hold ranges lo-hi ("1-10") and words the caller
// names (des: test, dev).
package seeds

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Max bounds the seeds of one list (ranges and items together).
const Max = 10000

// ErrNone is the error of a list that gives no seed.
var ErrNone = errors.New("gives no seed")

// Parse reads one seed.
func Parse(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a seed: seeds are whole numbers from 0 to %d", s, uint64(1<<64-1))
	}
	return v, nil
}

// ParseList reads a comma list of seeds, ranges lo-hi and words; word, if
// not nil, gives the seeds of a word (ok false: not a word it knows).
// Seeds come in the order given, each once; an empty list is an error.
func ParseList(spec string, word func(string) ([]uint64, bool)) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	add := func(s uint64) error {
		if !seen[s] {
			if len(out) == Max {
				return fmt.Errorf("%q gives more than %d seeds", spec, Max)
			}
			seen[s] = true
			out = append(out, s)
		}
		return nil
	}
	for _, f := range strings.Split(spec, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if word != nil {
			if ss, ok := word(f); ok {
				for _, s := range ss {
					if err := add(s); err != nil {
						return nil, err
					}
				}
				continue
			}
		}
		if a, b, ok := strings.Cut(f, "-"); ok && a != "" {
			lo, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
			hi, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 64)
			if err1 != nil || err2 != nil || hi < lo {
				return nil, fmt.Errorf("%q is not a seed range: want lo-hi with lo ≤ hi, e.g. 1-10", f)
			}
			for s := lo; ; s++ {
				if err := add(s); err != nil {
					return nil, err
				}
				if s == hi {
					break
				}
			}
			continue
		}
		s, err := Parse(f)
		if err != nil {
			return nil, err
		}
		if err := add(s); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q %w", spec, ErrNone)
	}
	return out, nil
}
