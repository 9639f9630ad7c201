package heapkernel

import "testing"

// Events run in time order, ties in the order they were scheduled.
func TestOrder(t *testing.T) {
	var k Kernel
	var got []int
	for i, tm := range []float64{3, 1, 2, 1, 0} {
		k.At(tm, func() { got = append(got, i) })
	}
	k.At(1, func() { k.At(k.Now(), func() { got = append(got, 9) }) })
	for k.Step() {
	}
	want := []int{4, 1, 3, 9, 2, 0}
	if len(got) != len(want) || k.Len() != 0 || k.Now() != 3 {
		t.Fatalf("ran %v, %d left, now %v; want %v, none, 3", got, k.Len(), k.Now(), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ran %v, want %v", got, want)
		}
	}
}
