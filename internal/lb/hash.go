package lb

import (
	"encoding/binary"
	"math"
	"math/bits"
	"time"

	"github.com/zeebo/xxh3"
)

// hashVersion is the leading byte of every hash input (HASH_VERSION = 1,
// wait-and-widen.md §4.1, pulsar.md §4.2).
const hashVersion = 0x01

// AppendTagged appends tagged(tag, value) of wait-and-widen.md §4.1 /
// pulsar.md §4.2: the tag's ASCII bytes, one 0xFF byte, len(value) as a
// little-endian uint64, then value's bytes.
func AppendTagged(b []byte, tag, value string) []byte {
	b = append(b, tag...)
	b = append(b, 0xFF)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(value)))
	return append(b, value...)
}

// AppendHashPrefix appends the common prefix of every ring and ranking
// input: the version byte, then tagged seed, routing_key and model_id. An
// absent seed or routing key is the empty string.
func AppendHashPrefix(b []byte, seed, routingKey, model string) []byte {
	b = append(b, hashVersion)
	// Upstream tags the seed part of the hash input with the config
	// field's name, so the tag is the registry's name for it. The hash
	// tests (TestRingHashVectors, TestPulsarHashLayout, TestPulsarHashGolden)
	// pin these bytes: a rename of the field, never expected since serde's
	// names are Stargate's config format, would fail them.
	b = AppendTagged(b, FieldSeed.Name, seed)
	b = AppendTagged(b, "routing_key", routingKey)
	return AppendTagged(b, "model_id", model)
}

// appendVirtualNode appends tagged("virtual_node", v as 8 LE bytes).
func appendVirtualNode(b []byte, v uint64) []byte {
	b = append(b, "virtual_node"...)
	b = append(b, 0xFF)
	b = binary.LittleEndian.AppendUint64(b, 8)
	return binary.LittleEndian.AppendUint64(b, v)
}

// RingKeyHash is key_hash(K) of wait-and-widen.md §4.1: XXH3-64 of the
// prefix followed by tagged("cache_affinity_key", K).
func RingKeyHash(seed, routingKey, model, key string) uint64 {
	var stack [256]byte
	b := AppendHashPrefix(stack[:0], seed, routingKey, model)
	b = AppendTagged(b, "cache_affinity_key", key)
	return xxh3.Hash(b)
}

// RingVirtualNodeHash is vnode_hash(id, v) of wait-and-widen.md §4.1.
func RingVirtualNodeHash(seed, routingKey, model, clusterID string, v uint64) uint64 {
	var stack [256]byte
	b := AppendHashPrefix(stack[:0], seed, routingKey, model)
	b = AppendTagged(b, "cluster_id", clusterID)
	b = appendVirtualNode(b, v)
	return xxh3.Hash(b)
}

// PulsarHash is hash(c) of pulsar.md §4.2: XXH3-64 of the prefix, the
// cache affinity key and the cluster id. Golden value (upstream test
// pulsar_hash_is_pinned_to_a_fixed_algorithm_and_version): seed "seed-1",
// routing key "rk-1", model "model-a", key "prefix-123", cluster "inst-a"
// ⇒ 0x19443c44ec9f8abf.
func PulsarHash(seed, routingKey, model, key, clusterID string) uint64 {
	var stack [256]byte
	b := AppendHashPrefix(stack[:0], seed, routingKey, model)
	b = AppendTagged(b, "cache_affinity_key", key)
	b = AppendTagged(b, "cluster_id", clusterID)
	return xxh3.Hash(b)
}

// PulsarUnit is u(c) of pulsar.md §4.3: (float64(hash)+1)/(float64(2^64−1)+2),
// every step an IEEE double operation (u ∈ (0, 1]).
//
// Computed without branches or a division, with the same bits: the two
// 32-bit halves convert exactly and their sum is rounded once, which is
// float64(hash)'s rounding (Go's unsigned conversion branches on the top
// bit, a coin flip for hashes); float64(2^64−1)+2 is exactly 2^64, so the
// division is the exact scaling by 2^−64 (TestPulsarUnitMatchesFormula).
func PulsarUnit(h uint64) float64 {
	f := float64(int64(h>>32))*0x1p32 + float64(int64(h&0xffffffff))
	return (f + 1.0) * 0x1p-64
}

// wideDuration is a Rust Duration: whole seconds (u64) and nanoseconds.
type wideDuration struct {
	secs  uint64
	nanos uint32
}

// ms returns ms(d) of wait-and-widen.md §1.4.
func (w wideDuration) ms() float64 {
	return float64((float64(w.secs) + float64(w.nanos)/1e9) * 1000.0) // never fused into a caller's sum
}

// duration converts to a time.Duration, saturating at the largest value
// (≈292 years; every consumer caps waits at 60 s).
func (w wideDuration) duration() time.Duration {
	if w.secs >= math.MaxInt64/1_000_000_000 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(w.secs*1e9 + uint64(w.nanos))
}

// durationFromSecsF64 is Rust's Duration::try_from_secs_f64: the exact
// value x seconds rounded to the nearest nanosecond (ties to even), failing
// for NaN, negative values and x ≥ 2^64 s (wait-and-widen.md §8 item 4).
// -0.0 is zero.
func durationFromSecsF64(x float64) (wideDuration, bool) {
	if x == 0 {
		return wideDuration{}, true
	}
	if math.IsNaN(x) || x < 0 || x >= 18446744073709551616.0 {
		return wideDuration{}, false
	}
	fb := math.Float64bits(x)
	exp := int((fb >> 52) & 0x7ff)
	mant := fb & (1<<52 - 1)
	if exp == 0 {
		exp = 1 // subnormal
	} else {
		mant |= 1 << 52
	}
	e := exp - 1075 // x = mant · 2^e exactly
	if e >= 0 {
		// x < 2^64, so mant<<e is a whole number of seconds below 2^64.
		return wideDuration{secs: mant << uint(e)}, true
	}
	s := uint(-e)
	if s >= 84 {
		// mant·1e9 < 2^83, so the value is below half a nanosecond.
		return wideDuration{}, true
	}
	hi, lo := bits.Mul64(mant, 1_000_000_000) // ns · 2^s
	qhi, qlo := shr128(hi, lo, s)
	_, roundLo := shr128(hi, lo, s-1)
	roundBit := roundLo&1 == 1
	// Sticky: any bit below position s-1.
	sticky := false
	if s >= 2 {
		mhi, mlo := mask128(s - 1)
		sticky = hi&mhi != 0 || lo&mlo != 0
	}
	if roundBit && (sticky || qlo&1 == 1) {
		var c uint64
		qlo, c = bits.Add64(qlo, 1, 0)
		qhi += c
	}
	if qhi >= 1e9 {
		return wideDuration{}, false
	}
	secs, nanos := bits.Div64(qhi, qlo, 1e9)
	return wideDuration{secs: secs, nanos: uint32(nanos)}, true
}

// shr128 shifts the 128-bit value hi:lo right by s (0 ≤ s < 128).
func shr128(hi, lo uint64, s uint) (uint64, uint64) {
	switch {
	case s == 0:
		return hi, lo
	case s >= 64:
		return 0, hi >> (s - 64)
	}
	return hi >> s, lo>>s | hi<<(64-s)
}

// mask128 returns the 128-bit mask of the low n bits (0 < n < 128).
func mask128(n uint) (uint64, uint64) {
	if n >= 64 {
		return 1<<(n-64) - 1, math.MaxUint64
	}
	return 0, 1<<n - 1
}
