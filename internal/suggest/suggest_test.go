package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	known := []string{"controller", "controller-command", "out", "paradigm", "seed"}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"controler", []string{"controller"}},
		{"paradgm", []string{"paradigm"}},
		{"ot", []string{"out"}},
		{"sed", []string{"seed"}},
		{"zzzzzzz", nil},
		{"", nil},
	} {
		if got := Closest(tc.name, known); !slices.Equal(got, tc.want) {
			t.Errorf("Closest(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d", d)
	}
}
