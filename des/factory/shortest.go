package factory

import (
	"math"
	"math/bits"

	"github.com/coordbench/coordbench/internal/decfmt"
)

// appendShortest writes f as strconv.AppendFloat(b, f, 'f', -1, 64) does
// when 1 <= |f| < 2^53 and f is not an integer, the range of simulation
// times, durations and power draws; it reports false (writing nothing)
// otherwise. strconv's general shortest
// search costs about 1,000 instructions a value; in this range exact
// integer arithmetic on 128 bits finds the same digits in a few steps.
//
// The method. |f| = m / 2^q with m < 2^53 an integer and 0 <= q <= 52.
// The decimals that parse back to |f| are those in its rounding interval,
// [4m-2, 4m+2] in units of 2^-(q+2) ([4m-1, 4m+2] when m is a power of two,
// whose float below is twice as close), bounds included when m is even
// (round half to even). The shortest representation has the fewest
// fraction digits k for which an integer c has c/10^k in that interval
// (the integer part is fixed, up to a carry into one more digit, which
// fewer fraction digits always outweigh); if several c qualify, strconv
// takes the one closest to |f|, a tie to the even one. Every product fits
// in 128 bits: m*10^k < 2^55 * 10^17 < 2^112. Having a candidate at k
// implies one at k+1 (10c), so the least k is found by walking down from a
// k that has one (first from 4, the short decimals' usual length, then
// from the length the float's precision implies). TestAppendShortestMatchesStrconv and FuzzAppendFloat
// compare the result with strconv byte for byte.
func appendShortest(b []byte, f float64) ([]byte, bool) {
	a := math.Abs(f)
	if !(a >= 1 && a < 1<<53) {
		return b, false
	}
	fb := math.Float64bits(a)
	m := fb&(1<<52-1) | 1<<52
	q := uint(1075 - fb>>52) // a = m / 2^q; 1 <= a < 2^53 gives 0 <= q <= 52
	if q == 0 {
		return b, false // an integer: the caller's short-decimal path writes it
	}
	even := m&1 == 0
	lo, hi, mid := 4*m-2, 4*m+2, 4*m
	if m == 1<<52 { // a power of two: the float below is closer
		lo = 4*m - 1
	}
	s := q + 2
	// candidates returns the least and greatest c with c/10^k in the
	// rounding interval (cmin > cmax: none).
	candidates := func(k int) (cmin, cmax uint64) {
		lq, lr := shiftDiv(lo, pow10u64[k], s)
		cmin = lq
		if lr != 0 || !even {
			cmin++
		}
		hq, hr := shiftDiv(hi, pow10u64[k], s)
		cmax = hq
		if hr == 0 && !even {
			cmax--
		}
		return cmin, cmax
	}
	// 10^kTop > 2^q makes the interval at least 0.75 units of 10^-kTop
	// wide: a candidate exists at kTop or, at worst, kTop+1. Durations and
	// power draws are mostly short decimals, with a candidate within
	// shortK digits: those are looked for there first, times with long
	// tails from kTop down.
	const shortK = 4
	kTop := int(float64(q)*log10of2) + 1
	k, floor := min(shortK, kTop), 0
	cmin, cmax := candidates(k)
	if cmin > cmax {
		k, floor = kTop, k+1
		for cmin, cmax = candidates(k); cmin > cmax; cmin, cmax = candidates(k) {
			if k+1 >= len(pow10u64) {
				return b, false // cannot happen in this range; strconv decides
			}
			k++
		}
	}
	for k > floor {
		lo1, hi1 := candidates(k - 1)
		if lo1 > hi1 {
			break
		}
		k, cmin, cmax = k-1, lo1, hi1
	}
	// The candidate closest to a, a tie to the even one.
	c, r := shiftDiv(mid, pow10u64[k], s)
	if half := uint64(1) << (s - 1); r > half || r == half && c&1 == 1 {
		c++
	}
	c = min(max(c, cmin), cmax)

	if f < 0 {
		b = append(b, '-')
	}
	ip, fp := c/pow10u64[k], c%pow10u64[k]
	b = decfmt.AppendUint(b, ip)
	if k > 0 {
		var buf [20]byte // the k fraction digits, leading zeros included, four then two at a time
		i := len(buf)
		n := k
		for ; n >= 4; n -= 4 {
			r := fp % 10000
			fp /= 10000
			hi, lo := r/100*2, r%100*2
			i -= 4
			buf[i], buf[i+1], buf[i+2], buf[i+3] = digitPairs[hi], digitPairs[hi+1], digitPairs[lo], digitPairs[lo+1]
		}
		for ; n >= 2; n -= 2 {
			d := fp % 100 * 2
			fp /= 100
			i -= 2
			buf[i], buf[i+1] = digitPairs[d], digitPairs[d+1]
		}
		if n == 1 {
			i--
			buf[i] = byte('0' + fp)
		}
		b = append(b, '.')
		b = append(b, buf[i:]...)
	}
	return b, true
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// log10of2 is log10(2).
const log10of2 = 0.30102999566398119521

// shiftDiv returns the quotient and remainder of x*y / 2^s (s < 64), for
// a product below 2^(64+s) (the quotient fits in 64 bits).
func shiftDiv(x, y uint64, s uint) (quo, rem uint64) {
	h, l := bits.Mul64(x, y)
	return h<<(64-s) | l>>s, l & (1<<s - 1)
}

// pow10u64 holds 10^0 ... 10^19, every power of ten a uint64 holds.
var pow10u64 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}
