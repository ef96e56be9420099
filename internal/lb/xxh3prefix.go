package lb

import (
	"encoding/binary"
	"math/bits"

	"github.com/zeebo/xxh3"
)

// prefixHash computes XXH3-64 (seed 0, default secret; the hash of
// pulsar.md §4.2) of many inputs that share a leading prefix: the Pulsar
// inputs of one request differ only in their cluster id part. For inputs
// of 17 to 240 bytes XXH3 adds up independent 16-byte chunk terms before
// its final mixing, so the terms of chunks that lie wholly inside the
// prefix are computed once per request instead of once per candidate.
// Other lengths go to xxh3.Hash. The result is xxh3.Hash's bit for bit
// (TestPrefixHashMatchesXXH3 over every length and prefix split).
//
// The algorithm is XXH3's short-input path as its specification
// (xxhash.com, doc/xxhash_spec.md "XXH3 algorithm", inputs of 17–128 and
// 129–240 bytes) describes it.
type prefixHash struct {
	n int // prefix length
	// mid[i]: the term of chunk i (bytes 16i..16i+15) in the 129–240 byte
	// form; front[j]: chunk j's term in the 17–128 byte form. Valid for
	// chunks inside the prefix (16(i+1) ≤ n).
	mid   [8]uint64
	front [4]uint64
}

// xxh3Secret is XXH3's default 192-byte secret (kSecret of the
// specification).
var xxh3Secret = [192]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

const xxh3Prime64x1 = 0x9E3779B185EBCA87

// xxh3Mix16 is mix16B: the 16 input bytes at b[off:] against the secret
// bytes at s, multiplied to 128 bits and folded.
func xxh3Mix16(b []byte, off, s int) uint64 {
	lo := binary.LittleEndian.Uint64(b[off:]) ^ binary.LittleEndian.Uint64(xxh3Secret[s:])
	hi := binary.LittleEndian.Uint64(b[off+8:]) ^ binary.LittleEndian.Uint64(xxh3Secret[s+8:])
	h, l := bits.Mul64(lo, hi)
	return h ^ l
}

// xxh3Avalanche is XXH3's final mixing of an accumulator.
func xxh3Avalanche(x uint64) uint64 {
	x ^= x >> 37
	x *= 0x165667919E3779F9
	return x ^ x>>32
}

// reset precomputes the chunk terms of prefix.
func (p *prefixHash) reset(prefix []byte) {
	p.n = len(prefix)
	for i := 0; i < 8 && 16*(i+1) <= p.n; i++ {
		p.mid[i] = xxh3Mix16(prefix, 16*i, 16*i)
	}
	for j := 0; j < 4 && 16*(j+1) <= p.n; j++ {
		p.front[j] = xxh3Mix16(prefix, 16*j, 32*j)
	}
}

// sum returns xxh3.Hash(b); b must start with the prefix given to reset.
func (p *prefixHash) sum(b []byte) uint64 {
	l := len(b)
	switch {
	case l > 128 && l <= 240:
		acc := uint64(l) * xxh3Prime64x1
		for i := 0; i < 8; i++ {
			if 16*(i+1) <= p.n {
				acc += p.mid[i]
			} else {
				acc += xxh3Mix16(b, 16*i, 16*i)
			}
		}
		acc = xxh3Avalanche(acc)
		for i := 128; i < l&^15; i += 16 {
			acc += xxh3Mix16(b, i, i-125)
		}
		acc += xxh3Mix16(b, l-16, 119)
		return xxh3Avalanche(acc)
	case l > 16 && l <= 128:
		acc := uint64(l) * xxh3Prime64x1
		for j := 0; j < 4 && (j == 0 || l > 32*j); j++ {
			if 16*(j+1) <= p.n {
				acc += p.front[j]
			} else {
				acc += xxh3Mix16(b, 16*j, 32*j)
			}
			acc += xxh3Mix16(b, l-16*(j+1), 32*j+16)
		}
		return xxh3Avalanche(acc)
	}
	return xxh3.Hash(b)
}
