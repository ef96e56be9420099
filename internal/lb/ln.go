package lb

import "math"

// Ln returns the natural logarithm of x, bit for bit what Stargate's
// f64::ln returns on Linux x86_64: Rust lowers f64::ln to the C library's
// log, and glibc (2.28 and later, checked against 2.36) runs the
// table-driven log of sysdeps/ieee754/dbl-64/e_log.c, built with FMA
// (__log_fma) on every CPU with FMA and AVX2. Go's math.Log is a different
// algorithm and differs in the last place for about 6 % of the unit values
// the Pulsar ranking produces (pulsar.md §4.4, §11.3).
//
// The evaluation order and every fused multiply-add are those of the
// __log_fma machine code (GCC contracts each product feeding an addition);
// math.FMA keeps them fused on every GOARCH, and products outside an FMA are
// wrapped in float64() so the Go compiler cannot fuse them on its own. The
// oracle test (ln_test.go) compares Ln with the C library's log on more
// than 10 million inputs.
//
// Special values follow C's log: Ln(1) = +0, Ln(±0) = −Inf, Ln(+Inf) =
// +Inf, and NaN for NaN and every x < 0. Subnormals are scaled by 2⁵² first,
// as glibc does. Ln never panics.
func Ln(x float64) float64 {
	ix := math.Float64bits(x)
	// Inputs in [1 − 2⁻⁴, 1 + 0x1.09p−4) take a longer polynomial in
	// r = x − 1, evaluated with a split of r²/2 into exact parts.
	if ix-lnNearLo < lnNearHi-lnNearLo {
		if ix == 0x3ff0000000000000 {
			return 0
		}
		return lnNearOne(x - 1.0)
	}
	if top := ix >> 48; top-0x0010 >= 0x7ff0-0x0010 {
		// Zero, subnormal, negative, infinite or NaN.
		switch {
		case ix<<1 == 0:
			return math.Inf(-1)
		case ix == 0x7ff0000000000000:
			return x
		case top&0x8000 != 0 || top&0x7ff0 == 0x7ff0:
			return math.NaN()
		}
		ix = math.Float64bits(float64(x*0x1p52)) - 52<<52
	}
	// x = 2^k·z with z in [0x1.6p−1, 0x1.6p0); z falls into one of 128
	// subintervals, whose table point c gives r = z/c − 1, |r| < 2⁻⁸, and
	// log x = k·ln2 + log c + log1p(r).
	t := ix - lnSubintervalBase
	i := (t >> 45) & 127
	k := int64(t) >> 52
	z := math.Float64frombits(ix - t&(0xfff<<52))
	invc, logc := lnTab[i][0], lnTab[i][1]
	r := math.FMA(z, invc, -1.0)
	kd := float64(k)
	w := math.FMA(kd, lnLn2Hi, logc) // exact: the table guarantees it
	hi := w + r
	lo := math.FMA(kd, lnLn2Lo, (w-hi)+r)
	a := &lnPoly
	r2 := float64(r * r)
	p := math.FMA(r2, math.FMA(r, a[4], a[3]), math.FMA(r, a[2], a[1]))
	s := math.FMA(r2, a[0], lo)
	s = math.FMA(float64(r*r2), p, s)
	return s + hi
}

// lnNearOne is Ln(1 + r) for the inputs near 1 (|r| < 0x1.09p−4).
func lnNearOne(r float64) float64 {
	b := &lnPoly1
	r2 := float64(r * r)
	r3 := float64(r * r2)
	q := math.FMA(r3, b[10], math.FMA(r2, b[9], math.FMA(r, b[8], b[7])))
	q = math.FMA(r3, q, math.FMA(r2, b[6], math.FMA(r, b[5], b[4])))
	q = math.FMA(r3, q, math.FMA(r2, b[3], math.FMA(r, b[2], b[1])))
	// r = rhi + rlo with rhi holding the top 26 bits, so b[0]·rhi² (b[0] =
	// −1/2) is exact; the products by 2²⁷ are exact too.
	rhi := math.FMA(-r, 0x1p27, math.FMA(r, 0x1p27, r))
	rlo := r - rhi
	sq := float64(rhi * rhi)
	hi := math.FMA(sq, b[0], r)
	lo := math.FMA(sq, b[0], r-hi)
	lo = math.FMA(float64(b[0]*rlo), rhi+r, lo)
	return math.FMA(r3, q, lo) + hi
}

const (
	lnLn2Hi = 0x1.62e42fefa3800p-1  // ln 2 rounded to 42 bits: k·lnLn2Hi is exact
	lnLn2Lo = 0x1.ef35793c76730p-45 // ln 2 − lnLn2Hi
	// lnNearLo and lnNearHi are the bits of 1 − 2⁻⁴ and 1 + 0x1.09p−4.
	lnNearLo = 0x3fee000000000000
	lnNearHi = 0x3ff1090000000000
	// lnSubintervalBase is the bits of 0x1.6p−1, the start of z's range.
	lnSubintervalBase = 0x3fe6000000000000
)
