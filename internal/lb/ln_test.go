package lb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/lcctl/lcctl/internal/lb/internal/libmoracle"
)

// lnOracleInputs is how many inputs TestLnMatchesCLibrary compares, at
// least 10 million (issue 15); one C call per chunk of inputs. Under the
// race detector it compares lnOracleInputs/lnOracleDivisor.
const lnOracleInputs = 10_500_000

// lnInputClass generates one class of inputs for the oracle test.
type lnInputClass struct {
	name string
	n    int
	gen  func(rng *rand.Rand, i int) float64
}

func lnInputClasses() []lnInputClass {
	hashPrefix := AppendHashPrefix(nil, "oracle", "routing-key", "model")
	hashPrefix = AppendTagged(hashPrefix, "cache_affinity_key", "")
	n := len(hashPrefix)
	buf := make([]byte, 0, 128)
	nearOneLo, nearOneHi := math.Float64frombits(lnNearLo), math.Float64frombits(lnNearHi)
	return []lnInputClass{
		// The exact u values of the ranking: PulsarUnit of uniformly random
		// 64-bit hashes, and of real ranking hashes over random cluster ids.
		{"PulsarUnit(random hash)", 3_000_000, func(rng *rand.Rand, _ int) float64 { return PulsarUnit(rng.Uint64()) }},
		{"PulsarUnit(xxh3 of a ranking input)", 1_000_000, func(rng *rand.Rand, i int) float64 {
			buf = AppendTagged(append(buf[:0], hashPrefix[:n]...), "cluster_id", "cluster-"+strconv.Itoa(i)+"-"+strconv.FormatUint(rng.Uint64()>>40, 36))
			return PulsarUnit(xxh3.Hash(buf))
		}},
		// The largest u: hashes near 2⁶⁴ − 1 give u = 1 − a few ulps.
		{"PulsarUnit(2^64 - 1 - k)", 200_000, func(_ *rand.Rand, i int) float64 { return PulsarUnit(math.MaxUint64 - uint64(i)) }},
		{"uniform in (0, 1]", 2_500_000, func(rng *rand.Rand, _ int) float64 { return 1 - rng.Float64() }},
		// Uniform over the bits of (0, 1): every binade equally often.
		{"random bits in (0, 1)", 1_000_000, func(rng *rand.Rand, _ int) float64 {
			return math.Float64frombits(1 + rng.Uint64N(0x3ff0000000000000-1))
		}},
		{"subnormal", 1_000_000, func(rng *rand.Rand, _ int) float64 { return math.Float64frombits(1 + rng.Uint64N(1<<52-1)) }},
		// Near 1: the separate polynomial's range, its two edges and the
		// values a few ulps from 1 on either side (the hard cases).
		{"near 1 (the second polynomial)", 1_000_000, func(rng *rand.Rand, _ int) float64 {
			return nearOneLo + rng.Float64()*(nearOneHi-nearOneLo)
		}},
		{"1 ± k ulp and the near-1 range edges", 400_000, func(_ *rand.Rand, i int) float64 {
			k := uint64(i / 8)
			switch i % 8 {
			case 0:
				return math.Float64frombits(0x3ff0000000000000 - k)
			case 1:
				return math.Float64frombits(0x3ff0000000000000 + k)
			case 2:
				return math.Float64frombits(lnNearLo - 1 - k)
			case 3:
				return math.Float64frombits(lnNearLo + k)
			case 4:
				return math.Float64frombits(lnNearHi - 1 - k)
			case 5:
				return math.Float64frombits(lnNearHi + k)
			case 6:
				// The 128 subinterval edges, within a few ulps.
				return math.Float64frombits(lnSubintervalBase + (k%128)<<45 + k/128%16 - 8)
			default:
				return 1 - float64(k+1)*0x1p-53
			}
		}},
		{"random positive finite", 400_000, func(rng *rand.Rand, _ int) float64 {
			return math.Float64frombits(1 + rng.Uint64N(0x7ff0000000000000-1))
		}},
	}
}

// TestLnMatchesCLibrary is the oracle test of issue 15: Ln is bit-identical
// to the C library's log (glibc's __log_fma, what Stargate's f64::ln runs)
// on more than 10 million inputs.
func TestLnMatchesCLibrary(t *testing.T) {
	info, err := libmoracle.Library()
	if err != nil {
		t.Fatalf("the C library oracle is not available: %v (CI has gcc; this test does not pass without one)", err)
	}
	if !info.FMA {
		t.Skipf("%s on this CPU (no FMA/AVX2) runs its non-FMA log; Ln reproduces __log_fma, what Stargate's x86_64 hosts run, so this machine cannot judge it", info.Library)
	}
	total := 0
	const chunk = 1 << 18
	in := make([]float64, chunk)
	out := make([]float64, chunk)
	rng := rand.New(rand.NewPCG(15, 402))
	for _, c := range lnInputClasses() {
		c.n /= lnOracleDivisor
		bad := 0
		for start := 0; start < c.n; start += chunk {
			m := min(chunk, c.n-start)
			for i := range m {
				in[i] = c.gen(rng, start+i)
			}
			if err := libmoracle.Log(in[:m], out[:m]); err != nil {
				t.Fatal(err)
			}
			for i := range m {
				got := Ln(in[i])
				if math.Float64bits(got) != math.Float64bits(out[i]) {
					if bad < 5 {
						t.Errorf("%s: Ln(%b = %v) = %b (%v), %s log = %b (%v)", c.name, math.Float64bits(in[i]), in[i],
							math.Float64bits(got), got, info.Library, math.Float64bits(out[i]), out[i])
					}
					bad++
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d inputs differ from the C library", c.name, bad, c.n)
		}
		total += c.n
	}
	if want := lnOracleInputs / lnOracleDivisor; total != want || lnOracleInputs < 10_000_000 {
		t.Fatalf("compared %d inputs, want %d (%d, at least 10 million, without the race detector)", total, want, lnOracleInputs)
	}
	t.Logf("Ln matches %s log (FMA variant) on %d inputs", info.Library, total)
}

// TestLnSpecialValues pins C's log at the edges (no oracle needed).
func TestLnSpecialValues(t *testing.T) {
	for _, c := range []struct {
		x, want float64
	}{
		{1, 0}, {0, math.Inf(-1)}, {math.Copysign(0, -1), math.Inf(-1)}, {math.Inf(1), math.Inf(1)},
		{math.E, 1}, {2, math.Ln2}, {0.5, -math.Ln2},
	} {
		if got := Ln(c.x); math.Float64bits(got) != math.Float64bits(c.want) {
			t.Errorf("Ln(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	for _, x := range []float64{-1, -math.SmallestNonzeroFloat64, math.Inf(-1), math.NaN()} {
		if got := Ln(x); !math.IsNaN(got) {
			t.Errorf("Ln(%v) = %v, want NaN", x, got)
		}
	}
	// The example u: glibc's −ln u is the correctly rounded
	// 3.866937739295642, Go's math.Log gives 3.8669377392956426.
	u := 0.020922341089228115
	if got := -Ln(u); got != 3.866937739295642 {
		t.Errorf("-Ln(%v) = %v, want 3.866937739295642", u, got)
	}
	if fmt.Sprint(-math.Log(u)) == fmt.Sprint(-Ln(u)) {
		t.Errorf("the example no longer separates Go's math.Log from glibc's log")
	}
}

// BenchmarkLn compares Ln with math.Log on the ranking's u values.
func BenchmarkLn(b *testing.B) {
	us := make([]float64, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range us {
		us[i] = PulsarUnit(rng.Uint64())
	}
	for _, f := range []struct {
		name string
		fn   func(float64) float64
	}{{"Ln", Ln}, {"math.Log", math.Log}} {
		b.Run(f.name, func(b *testing.B) {
			s := 0.0
			for i := 0; i < b.N; i++ {
				s += f.fn(us[i&1023])
			}
			lnBenchSink = s
		})
	}
}

var lnBenchSink float64
