package factory

import (
	"encoding/binary"
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
	c, k, ok := shortestDigits(f, true)
	if !ok {
		return b, false
	}
	var buf [decimalBuf]byte
	n := putDecimal(&buf, 0, f < 0, c, k)
	return append(b, buf[:n]...), true
}

// shortestDigits finds the digits appendShortest writes for f: |f| is
// written as c / 10^k with exactly k fraction digits. ok is false outside
// appendShortest's range. shortFirst looks for a candidate at shortK
// fraction digits first, for values that are mostly short decimals
// (durations, power draws); simulation times, which almost never are,
// start from the length the float's precision implies.
func shortestDigits(f float64, shortFirst bool) (c uint64, k int, ok bool) {
	a := math.Abs(f)
	if !(a >= 1 && a < 1<<53) {
		return 0, 0, false
	}
	fb := math.Float64bits(a)
	m := fb&(1<<52-1) | 1<<52
	q := uint(1075 - fb>>52) // a = m / 2^q; 1 <= a < 2^53 gives 0 <= q <= 52
	if q == 0 {
		return 0, 0, false // an integer: the caller's short-decimal path writes it
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
	// shortK digits: those are looked for there first (shortFirst), times
	// with long tails from kTop down.
	const shortK = 4
	kTop := int(q*78913>>18) + 1 // floor(q*log10(2)) + 1 (TestLog10Of2)
	var cmin, cmax uint64
	k, floor := kTop, 0
	switch {
	case shortFirst && shortK < kTop:
		k = shortK
		if cmin, cmax = candidates(k); cmin > cmax {
			k, floor = kTop, k+1
		}
	case !shortFirst:
		// A time's interval is 10^-(kTop-1) to 10^-kTop wide: there is a
		// candidate at kTop-1 about as often as not. Trying it first
		// settles which way to walk with one call fewer.
		if cmin, cmax = candidates(kTop - 1); cmin <= cmax {
			k = kTop - 1
		} else {
			floor = kTop // none at kTop-1, so none below
		}
	}
	if k == kTop {
		for cmin, cmax = candidates(k); cmin > cmax; cmin, cmax = candidates(k) {
			if k+1 >= len(pow10u64) {
				return 0, 0, false // cannot happen in this range; strconv decides
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
	return min(max(c, cmin), cmax), k, true
}

// decimalBuf is the size of putDecimal's buffer: room for a 6-byte
// prefix, 17 significant digits, a sign, a point and the spill of 8-byte
// stores.
const decimalBuf = 48

// zeros8 is eight '0' digits, one per byte.
const zeros8 = 0x3030303030303030

// putDecimal writes c / 10^k (k < len(pow10u64)) with exactly k fraction
// digits, '-' first if neg, into buf from index n (at most 6), and returns
// the index after it. The digits go eight at a time (digits8) for an
// integer part below 10^8 and at most 16 fraction digits (every
// simulation time); other values take the general path. c has at most
// 17 significant digits (strconv's shortest never has more).
func putDecimal(buf *[decimalBuf]byte, n int, neg bool, c uint64, k int) int {
	if neg {
		buf[n] = '-'
		n++
	}
	p := pow10u64[k]
	ip, fp := c/p, c%p
	if ip >= 1e8 || k > 16 {
		return n + copy(buf[n:], appendDecimalSlow(nil, ip, fp, k))
	}
	w := digits8(ip)                              // ip >= 1 (appendShortest's range) or 0: at most 7 leading zero bytes
	z := min(uint(bits.TrailingZeros64(w))>>3, 7) // the leading zero digits (little-endian: the low bytes)
	binary.LittleEndian.PutUint64(buf[n:n+8], (w+zeros8)>>(8*z))
	n += 8 - int(z)
	if k == 0 {
		return n
	}
	buf[n] = '.'
	n++
	if k <= 8 {
		binary.LittleEndian.PutUint64(buf[n:n+8], digits8(fp*pow10u64[8-k])+zeros8)
		return n + k
	}
	d := pow10u64[k-8]
	binary.LittleEndian.PutUint64(buf[n:n+8], digits8(fp/d)+zeros8)
	binary.LittleEndian.PutUint64(buf[n+8:n+16], digits8(fp%d*pow10u64[16-k])+zeros8)
	return n + k
}

// digits8 returns the eight decimal digits of x < 10^8, leading zeros
// included, as byte values 0-9 in a little-endian word (the most
// significant digit in the low byte, first in memory): x is split into
// halves of four digits in 32-bit lanes, those into pairs in 16-bit
// lanes and those into digits in bytes, each split a multiplication by a
// reciprocal (x*10486>>20 is x/100 for x < 10^4, x*103>>10 is x/10 for
// x < 100; TestDigits8 checks every lane value).
func digits8(x uint64) uint64 {
	hi := x / 10000
	v := hi | (x-hi*10000)<<32
	top := v * 10486 >> 20 & 0x0000007F0000007F
	v = (v-100*top)<<16 | top
	tens := v * 103 >> 10 & 0x000F000F000F000F
	return (v-10*tens)<<8 | tens
}

// appendDecimalSlow appends ip, '.' and the k digits of fp (leading zeros
// included; none and no point when k is 0).
func appendDecimalSlow(b []byte, ip, fp uint64, k int) []byte {
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
	return b
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// shiftDiv returns the quotient and remainder of x*y / 2^s (s < 64), for
// a product below 2^(64+s) (the quotient fits in 64 bits).
func shiftDiv(x, y uint64, s uint) (quo, rem uint64) {
	h, l := bits.Mul64(x, y)
	s &= 63 // s < 64 already: spares the compiler's checks for larger shifts
	return h<<((64-s)&63) | l>>s, l & (1<<s - 1)
}

// pow10u64 holds 10^0 ... 10^19, every power of ten a uint64 holds.
var pow10u64 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}
