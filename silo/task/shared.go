package task

// What the generators and solvers of all levels share: the published
// sharding rule, random draws, concatenating shards, splitting answers,
// and Python's round() and sum().
//
// Floating-point code follows CPython's evaluation exactly: sums run left to
// right from 0 (built-in sum() up to CPython 3.11), x**2 is x*x, and every
// product is converted explicitly (float64(a*b)) so that the compiler cannot
// fuse it into a multiply-add (Go spec, "Arithmetic operators").

import (
	"errors"
	"math"
	"strconv"

	"github.com/coordbench/coordbench/silo/pyrand"
	"github.com/coordbench/coordbench/silo/pyvalue"
)

type rng = *pyrand.Random

// bounds is the published sharding rule: chunk = total // n; agent i gets
// [i*chunk, i*chunk+chunk), the last agent gets everything from (n-1)*chunk.
func bounds(total, n int) [][2]int {
	c := total / n
	b := make([][2]int, n)
	for i := range b {
		b[i] = [2]int{i * c, i*c + c}
	}
	b[n-1][1] = total
	return b
}

func splitAny[T any](xs []T, n int, conv func([]T) any) []any {
	out := make([]any, n)
	for i, b := range bounds(len(xs), n) {
		out[i] = conv(xs[b[0]:b[1]])
	}
	return out
}

func splitInts(xs []int, n int) []any {
	return splitAny(xs, n, func(s []int) any { return pyvalue.Ints(s) })
}

func splitFloats(xs []float64, n int) []any {
	return splitAny(xs, n, func(s []float64) any { return pyvalue.Floats(s) })
}

func splitStrings(xs []string, n int) []any {
	return splitAny(xs, n, func(s []string) any { return pyvalue.Strings(s) })
}

// segments splits a global per-position answer by the shards' own lengths
// (agent i gets the positions of its own shard).
func segments[T any](xs []T, lens []int, conv func([]T) any) ([]any, error) {
	out := make([]any, len(lens))
	at := 0
	for i, l := range lens {
		if at+l > len(xs) {
			return nil, errors.New("shard lengths exceed the data")
		}
		out[i] = conv(xs[at : at+l])
		at += l
	}
	return out, nil
}

func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func randInts(r rng, count, lo, hi int) []int {
	xs := make([]int, count)
	for i := range xs {
		xs[i] = r.RandInt(lo, hi)
	}
	return xs
}

func uniforms(r rng, count int, lo, hi float64) []float64 {
	xs := make([]float64, count)
	for i := range xs {
		xs[i] = r.Uniform(lo, hi)
	}
	return xs
}

func shuffle[T any](r rng, xs []T) {
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
}

// pyRound is Python's round(x, nd) for floats: correctly rounded to nd
// decimals, ties to even on the exact binary value.
func pyRound(x float64, nd int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', nd, 64), 64)
	if f == 0 && math.Signbit(x) {
		return math.Copysign(0, -1)
	}
	return f
}

// pySum adds left to right from 0, as sum() does on CPython <= 3.11.
func pySum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func concatInts(shards []any) []int {
	var all []int
	for _, s := range shards {
		all = append(all, asInts(s)...)
	}
	return all
}

func concatFloats(shards []any) []float64 {
	var all []float64
	for _, s := range shards {
		all = append(all, asFloats(s)...)
	}
	return all
}

func concatStrings(shards []any) []string {
	var all []string
	for _, s := range shards {
		all = append(all, asStrings(s)...)
	}
	return all
}

func lens(shards []any) []int {
	out := make([]int, len(shards))
	for i, s := range shards {
		switch x := s.(type) {
		case *pyvalue.List:
			out[i] = len(x.Items)
		case string:
			out[i] = len(x)
		}
	}
	return out
}

var errNoData = errors.New("no data in any shard")

func distinct(xs []int) int {
	seen := map[int]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}
