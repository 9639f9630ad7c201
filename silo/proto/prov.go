package proto

import (
	"encoding/json"
	"math/bits"
)

// bitset is a provenance set: the shard indices (agent ids) whose data an
// author or reader has seen, directly or transitively.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) add(i int) { b[i/64] |= 1 << (uint(i) % 64) }

func (b bitset) merge(o bitset) {
	for i := range o {
		if i < len(b) {
			b[i] |= o[i]
		}
	}
}

func (b bitset) clone() bitset { return append(bitset(nil), b...) }

func (b bitset) list() []int {
	out := make([]int, 0, 4)
	for w, x := range b {
		for x != 0 {
			t := bits.TrailingZeros64(x)
			out = append(out, w*64+t)
			x &^= 1 << uint(t)
		}
	}
	return out
}

func (b bitset) json() string {
	buf, _ := json.Marshal(b.list())
	return string(buf)
}
