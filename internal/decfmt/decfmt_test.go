package decfmt

import (
	"math"
	"strconv"
	"testing"
)

// AppendUint writes what strconv.AppendUint writes, appending.
func TestAppendUintMatchesStrconv(t *testing.T) {
	vs := []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 65535, 1<<32 - 1, 1 << 32, 1e15, 1e19, math.MaxUint64 - 1, math.MaxUint64}
	for v := uint64(0); v < 100000; v += 7 {
		vs = append(vs, v)
	}
	for _, v := range vs {
		if got, want := string(AppendUint([]byte("x="), v)), "x="+strconv.FormatUint(v, 10); got != want {
			t.Fatalf("AppendUint(%d) = %q, want %q", v, got, want)
		}
	}
}
