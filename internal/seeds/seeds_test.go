package seeds

import (
	"slices"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	test := func(w string) ([]uint64, bool) { return []uint64{7, 8}, w == "test" }
	for _, tc := range []struct {
		spec string
		want []uint64
		err  string
	}{
		{"1-3,5", []uint64{1, 2, 3, 5}, ""},
		{"5, 2-3 ,2", []uint64{5, 2, 3}, ""},
		{"test,1-2", []uint64{7, 8, 1, 2}, ""},
		{"18446744073709551614-18446744073709551615", []uint64{1<<64 - 2, 1<<64 - 1}, ""},
		{"-1", nil, "seeds are whole numbers from 0"},
		{"3-1", nil, "is not a seed range"},
		{"x", nil, `"x" is not a seed`},
		{"0-20000", nil, "more than 10000 seeds"},
		{" , ", nil, "gives no seed"},
	} {
		got, err := ParseList(tc.spec, test)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want error with %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.spec, got, err, tc.want)
		}
	}
}
