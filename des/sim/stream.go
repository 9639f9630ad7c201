package sim

import (
	"math"
	"math/bits"
)

// Stream is a deterministic pseudo-random number generator derived from a
// (seed, name) pair. Each exogenous process of a simulation (arrivals,
// breakdowns, processing times, ...) draws from its own named stream, so that
// adding draws to one process never shifts the values seen by another.
//
// The generator is xoshiro256** (Blackman and Vigna, 2018). Its 256-bit state
// is filled by four successive outputs of splitmix64 started at
// seed ^ fnv1a64(name). All derived distributions are computed with integer
// arithmetic or with explicitly rounded float64 operations (including a
// private logarithm), so their values do not depend on the Go release, on the
// architecture or on the compiler's use of fused multiply-add.
//
// Stream is a small value type: copying a Stream forks it (both copies then
// produce the same values). The zero Stream is not useful; use NewStream.
// A Stream is not safe for concurrent use.
type Stream struct {
	s0, s1, s2, s3 uint64
}

const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
)

// fnv1a64 is the 64-bit FNV-1a hash of s.
func fnv1a64(s string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// splitmix64 advances *x and returns the next splitmix64 output.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// NewStream returns the stream named name under the given seed. The same
// (seed, name) always yields the same sequence of values; different names
// (or seeds) yield independent-looking sequences.
func NewStream(seed uint64, name string) Stream {
	x := seed ^ fnv1a64(name)
	var s Stream
	s.s0 = splitmix64(&x)
	s.s1 = splitmix64(&x)
	s.s2 = splitmix64(&x)
	s.s3 = splitmix64(&x)
	if s.s0|s.s1|s.s2|s.s3 == 0 { // cannot happen with splitmix64, but xoshiro must not start at 0
		s.s0 = 0x9e3779b97f4a7c15
	}
	return s
}

// Uint64 returns the next 64 uniformly distributed random bits.
func (s *Stream) Uint64() uint64 {
	r := bits.RotateLeft64(s.s1*5, 7) * 9
	t := s.s1 << 17
	s.s2 ^= s.s0
	s.s3 ^= s.s1
	s.s1 ^= s.s2
	s.s0 ^= s.s3
	s.s2 ^= t
	s.s3 = bits.RotateLeft64(s.s3, 45)
	return r
}

// Float64 returns a uniform value in [0, 1) with 53 random bits (a multiple
// of 2^-53).
func (s *Stream) Float64() float64 {
	return float64(s.Uint64()>>11) * 0x1p-53
}

// Intn returns a uniform integer in [0, n), without modulo bias (Lemire's
// multiply-and-reject method). It returns 0 when n <= 0.
func (s *Stream) Intn(n int) int {
	if n <= 0 {
		return 0
	}
	un := uint64(n)
	hi, lo := bits.Mul64(s.Uint64(), un)
	if lo < un {
		thresh := -un % un // 2^64 mod n
		for lo < thresh {
			hi, lo = bits.Mul64(s.Uint64(), un)
		}
	}
	return int(hi)
}

// Exp returns an exponentially distributed value with the given mean, by
// inverse transform: -mean*log(1-u) with u = Float64(). It always consumes
// one draw; a mean <= 0 (or NaN) yields 0, an infinite mean +Inf.
func (s *Stream) Exp(mean float64) float64 {
	u := s.Float64()
	if !(mean > 0) {
		return 0
	}
	if mean > math.MaxFloat64 {
		return mean
	}
	// 1-u is exact and lies in [2^-53, 1]: positive and normal, so its
	// log is finite and <= 0.
	return float64(-mean * logNormal(1-u))
}

// Uniform returns a uniform value in [lo, hi) (computed as lo + (hi-lo)*u).
func (s *Stream) Uniform(lo, hi float64) float64 {
	u := s.Float64()
	return lo + float64((hi-lo)*u)
}

// Weighted returns index i with probability w[i]/sum(w). It consumes exactly
// one draw. It returns 0 (still consuming the draw) when w is empty, when the
// sum is not positive and finite, or when some weight is negative or NaN.
func (s *Stream) Weighted(w []float64) int {
	u := s.Float64()
	total := 0.0
	for _, x := range w {
		if !(x >= 0) { // negative or NaN
			return 0
		}
		total += x
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return 0
	}
	r := float64(u * total)
	acc := 0.0
	last := 0
	for i, x := range w {
		if x == 0 {
			continue
		}
		last = i
		acc += x
		if r < acc {
			return i
		}
	}
	// Rounding made r >= the running sum: return the last positive weight.
	return last
}

// detLog is the natural logarithm, the FreeBSD msun algorithm as in Go's pure
// math.log, with every product explicitly rounded so that no fused
// multiply-add can change the result on any architecture. It is used instead
// of math.Log, whose amd64 assembly and pure-Go versions may differ, so that
// random streams are identical everywhere and forever.
func detLog(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
	)
	u := math.Float64bits(x)
	if ex := int(u>>52) - 1023; ex < -1022 || ex > 1023 || u>>63 != 0 {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 1):
			return x
		case x < 0:
			return math.NaN()
		case x == 0:
			return math.Inf(-1)
		}
		// subnormal: scale into the normal range
		return detLog(x*0x1p52) - float64(52*ln2Hi) - float64(52*ln2Lo)
	}
	return logNormal(x)
}

// logNormal is detLog of a positive normal x (Exp's 1-u, for one), without
// the checks for the other cases.
func logNormal(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
		l1    = 6.666666666666735130e-01   /* 3FE55555 55555593 */
		l2    = 3.999999999940941908e-01   /* 3FD99999 9997FA04 */
		l3    = 2.857142874366239149e-01   /* 3FD24924 94229359 */
		l4    = 2.222219843214978396e-01   /* 3FCC71C5 1D8E78AF */
		l5    = 1.818357216161805012e-01   /* 3FC74664 96CB03DE */
		l6    = 1.531383769920937332e-01   /* 3FC39A09 D078C69F */
		l7    = 1.479819860511658591e-01   /* 3FC2F112 DF3E5244 */
	)
	// Reduce x = 2^k * (1+f) with sqrt(2)/2 <= 1+f < sqrt(2).
	u := math.Float64bits(x)
	ex := int(u>>52) - 1023      // biased exponent in [1, 2046]
	m := u&(1<<52-1) | 1023<<52  // mantissa as a value in [1, 2)
	if m >= 0x3ff6a09e667f3bcd { // 1+f >= sqrt(2): use (1+f)/2 and k+1
		m -= 1 << 52
		ex++
	}
	f := math.Float64frombits(m) - 1
	k := float64(ex)

	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	r := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f)
}
