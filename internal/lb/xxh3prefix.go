package lb

import (
	"encoding/binary"
	"math/bits"

	"github.com/zeebo/xxh3"
)

// windowHash computes XXH3-64 (seed 0, default secret; the hash of
// pulsar.md §4.2) of many inputs of one length l that share their first c
// bytes: the Pulsar inputs of one request whose cluster ids have the same
// length differ only in the id's bytes, after its tag and length. For
// inputs of 17 to 240 bytes XXH3 adds up independent 16-byte window terms
// before (and between) its final mixings, so the terms of windows that lie
// wholly inside the shared bytes are added once (init), and only the
// windows that reach the differing bytes are computed per input (sum).
// Those are read from the differing bytes themselves, each 8-byte word
// being the shared bytes' part (fixed at init, already combined with the
// secret) and the differing bytes' part shifted into place: nothing is
// written to memory per input. Other lengths are left to the caller
// (kind hashOther). The result is xxh3.Hash's bit for bit
// (TestWindowHashMatchesXXH3 over every length and split).
//
// The algorithm is XXH3's short-input path as its specification
// (xxhash.com, doc/xxhash_spec.md "XXH3 algorithm", inputs of 17–128 and
// 129–240 bytes) describes it.
type windowHash struct {
	kind uint8 // hashOther, hashMid (17–128 bytes) or hashLong (129–240)
	// acc is l·PRIME64_1 plus the shared windows' terms of the first
	// round; with no varying window there (nv = 0, hashLong) front is its
	// avalanche. acc2 holds the shared terms of hashLong's second round.
	acc, front, acc2 uint64
	// vw and vw2 are the varying windows of the first and second round.
	vw, vw2 [8]hashWindow
	nv, nv2 int
	// word is set when the long path has one varying window in each
	// round (nv = nv2 = 1) and each of them one word with differing
	// bytes: w1 and w2 are those windows in that form (sumRunWord).
	word   bool
	w1, w2 varyingWord
}

// varyingWord is a hashWindow with one word of differing bytes: the other
// word's part (fixed, the shared bytes xor the secret), and the varying
// word's fixed part, 2^by and where its differing bytes start (at).
type varyingWord struct {
	other, fixed, mul uint64
	at                uint8
}

// single returns v as a varyingWord when one of its words has no
// differing bytes (mix16's product does not depend on the order of the
// two words).
func (v *hashWindow) single() (varyingWord, bool) {
	switch {
	case v.by[0] >= 64 && v.by[1] < 64:
		return varyingWord{other: v.fixed[0], fixed: v.fixed[1], mul: v.mul[1], at: v.at[1]}, true
	case v.by[1] >= 64 && v.by[0] < 64:
		return varyingWord{other: v.fixed[1], fixed: v.fixed[0], mul: v.mul[0], at: v.at[0]}, true
	}
	return varyingWord{}, false
}

// termAt is the window's mix16 term for differing bytes p (as
// hashWindow.termAt).
func (v *varyingWord) termAt(p *[idSpan]byte) uint64 {
	h, l := bits.Mul64(v.other, v.fixed^binary.LittleEndian.Uint64(p[v.at&63:])*v.mul)
	return h ^ l
}

// hashWindow is one 16-byte window reaching the differing bytes: for each
// of its two words, the shared bytes' part xor the secret word (fixed),
// where the word's differing bytes start in the differing bytes (at) and
// how far they shift up (by; 64 or more: the word has none).
type hashWindow struct {
	fixed [2]uint64
	// mul is 2^by (0 when by ≥ 64): the shift as a product, for termAt.
	mul [2]uint64
	at  [2]uint8
	by  [2]uint8
}

// windowHash kinds.
const (
	hashOther = iota
	hashMid
	hashLong
)

// init prepares the hash of l-byte inputs whose first c bytes are b[:c].
// With m ≠ nil, the terms of windows within b[:m.common] are taken from
// m, and added to it when m has none (m belongs to one such b[:m.common]).
func (w *windowHash) init(b []byte, c, l int, m *termMemo) {
	// Only the fields read for this kind are set: the window arrays are
	// not cleared, each window taken being written whole.
	w.kind, w.acc, w.front, w.acc2, w.nv, w.nv2, w.word = hashOther, 0, 0, 0, 0, 0, false
	add := func(acc *uint64, vs *[8]hashWindow, nv *int, off, sec int) {
		if off+16 <= c {
			*acc += m.mix16(b, off, sec)
			return
		}
		v := &vs[*nv]
		*nv++
		for k := 0; k < 2; k++ {
			q := off + 8*k // the word's first byte, q+8 ≤ l
			word := binary.LittleEndian.Uint64(b[q:])
			switch s := c - q; { // the word's shared bytes
			case s >= 8:
				v.at[k], v.by[k], v.mul[k] = 0, 64, 0
			case s > 0:
				word &= 1<<(8*s) - 1
				v.at[k], v.by[k], v.mul[k] = 0, uint8(8*s), 1<<(8*s)
			default:
				word = 0
				v.at[k], v.by[k], v.mul[k] = uint8(-s), 0, 1
			}
			v.fixed[k] = word ^ binary.LittleEndian.Uint64(xxh3Secret[sec+8*k:])
		}
	}
	switch {
	case l > 16 && l <= 128:
		w.kind, w.acc = hashMid, uint64(l)*xxh3Prime64x1
		for j := 0; j < 4 && (j == 0 || l > 32*j); j++ {
			add(&w.acc, &w.vw, &w.nv, 16*j, 32*j)
			add(&w.acc, &w.vw, &w.nv, l-16*(j+1), 32*j+16)
		}
	case l > 128 && l <= 240:
		w.kind, w.acc = hashLong, uint64(l)*xxh3Prime64x1
		s1, n1, s2, end2 := m.longSums(b)
		w.acc += s1
		for i := n1; i < 8; i++ {
			add(&w.acc, &w.vw, &w.nv, 16*i, 16*i)
		}
		if w.nv == 0 {
			w.front = xxh3Avalanche(w.acc)
		}
		w.acc2 += s2
		for i := end2; i < l&^15; i += 16 {
			add(&w.acc2, &w.vw2, &w.nv2, i, i-125)
		}
		add(&w.acc2, &w.vw2, &w.nv2, l-16, 119)
		if w.nv == 1 && w.nv2 == 1 {
			var ok1, ok2 bool
			w.w1, ok1 = w.vw[0].single()
			w.w2, ok2 = w.vw2[0].single()
			w.word = ok1 && ok2
		}
	}
}

// termMemo keeps the mix16 terms of the windows that lie within the
// first common bytes of a request's hash inputs (its prefix and the id
// tag: every id length shares them), each 16-byte window at a multiple of
// 16 (every window XXH3's 17–240-byte paths take there) with the secret
// offset it was taken with: init computes them once per request, not once
// per id length.
type termMemo struct {
	common int
	has    uint32 // bit j: v[j] holds window j's term with secret sec[j]
	sec    [32]int16
	v      [32]uint64
	// The long path's windows within the common bytes, summed once a
	// request (longSums): the first n1 of the first round (s1), and
	// those of the second round that end by end2 (s2); long says they
	// are set.
	long     bool
	s1, s2   uint64
	n1, end2 int
}

// longSums returns the sums of the mix16 terms of XXH3's 129–240-byte
// path that lie within the common bytes of b (every input of that path
// has them, whatever its length): the first round's windows 0 to n1−1
// (s1), and the second round's windows from byte 128 up to end2 (s2).
// A nil m has none: 0, 0, 0, 128.
func (m *termMemo) longSums(b []byte) (s1 uint64, n1 int, s2 uint64, end2 int) {
	if m == nil {
		return 0, 0, 0, 128
	}
	if !m.long {
		m.s1, m.n1, m.s2, m.end2 = 0, min(8, m.common/16), 0, 128
		for i := 0; i < m.n1; i++ {
			m.s1 += xxh3Mix16(b, 16*i, 16*i)
		}
		for ; m.end2+16 <= m.common; m.end2 += 16 {
			m.s2 += xxh3Mix16(b, m.end2, m.end2-125)
		}
		m.long = true
	}
	return m.s1, m.n1, m.s2, m.end2
}

// mix16 is xxh3Mix16(b, off, s), from m when the window lies within
// m.common bytes (nil m: never).
func (m *termMemo) mix16(b []byte, off, s int) uint64 {
	if m == nil || off+16 > m.common || off%16 != 0 || off/16 >= len(m.v) {
		return xxh3Mix16(b, off, s)
	}
	j := off / 16
	if m.has>>j&1 == 1 && int(m.sec[j]) == s {
		return m.v[j]
	}
	x := xxh3Mix16(b, off, s)
	m.has |= 1 << j
	m.sec[j], m.v[j] = int16(s), x
	return x
}

// term is window v's mix16 term for the differing bytes t.
func (v *hashWindow) term(t []byte) uint64 {
	lo := v.fixed[0] ^ binary.LittleEndian.Uint64(t[v.at[0]:])<<v.by[0]
	hi := v.fixed[1] ^ binary.LittleEndian.Uint64(t[v.at[1]:])<<v.by[1]
	h, l := bits.Mul64(lo, hi)
	return h ^ l
}

// idSpan is how many bytes termAt may read from the start of the
// differing bytes: a word at any offset below 64 (an id of fewer than
// idHashClasses bytes has its words there).
const idSpan = 64 + 8

// termAt is term for differing bytes p of fewer than 64 bytes (every at
// below 56), without bounds checks: the offset is masked to the array,
// and the shift is a product (mul).
func (v *hashWindow) termAt(p *[idSpan]byte) uint64 {
	lo := v.fixed[0] ^ binary.LittleEndian.Uint64(p[v.at[0]&63:])*v.mul[0]
	hi := v.fixed[1] ^ binary.LittleEndian.Uint64(p[v.at[1]&63:])*v.mul[1]
	h, l := bits.Mul64(lo, hi)
	return h ^ l
}

// sum returns xxh3.Hash of the c shared bytes given to init followed by
// the l−c bytes t[:l−c]; t must hold at least 8 more bytes (any values:
// they are shifted out). Kind hashOther returns 0.
func (w *windowHash) sum(t []byte) uint64 {
	switch w.kind {
	case hashMid:
		acc := w.acc
		for i := range w.vw[:w.nv] {
			acc += w.vw[i].term(t)
		}
		return xxh3Avalanche(acc)
	case hashLong:
		acc := w.front
		if w.nv > 0 {
			a := w.acc
			for i := range w.vw[:w.nv] {
				a += w.vw[i].term(t)
			}
			acc = xxh3Avalanche(a)
		}
		acc += w.acc2
		for i := range w.vw2[:w.nv2] {
			acc += w.vw2[i].term(t)
		}
		return xxh3Avalanche(acc)
	}
	return 0
}

// wholeInput is the class of ids too long for a window layout (kind
// hashOther; never modified).
var wholeInput windowHash

// idHashClasses is the longest cluster id length + 1 whose hash terms
// candidateHasher keeps; longer ids are hashed whole.
const idHashClasses = 64

// candidateHasher computes PulsarHash for one request's prefix (version,
// seed, routing key, model, cache affinity key) and many cluster ids:
// the input is the prefix, tagged("cluster_id", id); everything up to the
// id's bytes is the same for ids of one length, so each length has its
// windowHash, prepared on its first id of the request.
type candidateHasher struct {
	buf   []byte // prefix, "cluster_id", 0xFF, the id length (8 bytes), the id
	at    int    // where the id length goes
	stamp uint64 // request number; a class is valid when its stamp matches
	// cls holds a windowHash per id length (allocated on the first reset:
	// about 28 KB, kept out of the Engine's hot fields).
	cls *[idHashClasses]hashClass
	// memo holds the request's window terms shared by every id length.
	memo termMemo
}

// hashClass is candidateHasher's windowHash for one id length.
type hashClass struct {
	stamp uint64
	w     windowHash
}

// reset starts a request whose hash inputs begin with prefix.
func (h *candidateHasher) reset(prefix []byte) {
	b := append(h.buf[:0], prefix...)
	b = append(b, "cluster_id"...)
	h.buf = append(b, 0xFF)
	h.at = len(h.buf)
	h.stamp++
	h.memo.common, h.memo.has, h.memo.long = h.at, 0, false
	if h.cls == nil {
		h.cls = new([idHashClasses]hashClass)
	}
}

// whole returns the whole hash input for id (in h.buf).
func (h *candidateHasher) whole(id []byte) []byte {
	b := binary.LittleEndian.AppendUint64(h.buf[:h.at], uint64(len(id)))
	h.buf = append(b, id...)
	return h.buf
}

// class returns the windowHash of ids of n bytes (kind hashOther: hash
// the whole input).
func (h *candidateHasher) class(n int) *windowHash {
	if n >= idHashClasses {
		return &wholeInput
	}
	c := &h.cls[n]
	if c.stamp != h.stamp {
		b := h.whole(make([]byte, n)) // the id's bytes are not read
		c.w.init(b, h.at+8, len(b), &h.memo)
		c.stamp = h.stamp
	}
	return &c.w
}

// sumAll sets hashes[i] to PulsarHash of the reset prefix and cluster id
// i (set.idData[set.idStart[i]:set.idStart[i+1]]; xxh3.Hash(prefix +
// tagged("cluster_id", id))) for every candidate i of set with a valid
// weight (0 for the others), reading each id where the set keeps it
// (followed by at least 8 bytes: idPad). It goes run by run
// (set.runs): the ids of a run have one length and lie end to end, so
// the loops of the usual classes step through them at a fixed stride.
//
// It also lists in sel (room for one entry a candidate) the candidates
// whose hash is at least cut, in order, without a branch per hash, and
// returns how many there are.
func (h *candidateHasher) sumAll(set *rankCandidateSet, hashes []uint64, cut uint64, sel []int32) int {
	k, next := 0, 0
	starts, data := set.idStart, set.idData
	for _, r := range set.runs {
		clear(hashes[next:r.from]) // no valid weight
		next = int(r.to)
		n := int(starts[r.from+1] - starts[r.from])
		w := h.class(n)
		out := hashes[r.from:r.to]
		ids := data[starts[r.from]:]
		switch {
		case w.word:
			k = sumRunWord(w, ids, n, out, r.from, sel, k, cut)
			continue
		case w.kind == hashLong && w.nv == 1 && w.nv2 == 1:
			k = sumRunLong1(w, ids, n, out, r.from, sel, k, cut)
			continue
		}
		for j := range out {
			t := ids[j*n:]
			switch {
			case w.kind == hashMid && w.nv == 2:
				out[j] = xxh3Avalanche(w.acc + w.vw[0].term(t) + w.vw[1].term(t))
			case w.kind != hashOther:
				out[j] = w.sum(t)
			default:
				out[j] = xxh3.Hash(h.whole(t[:n]))
			}
			sel[k] = r.from + int32(j)
			_, below := bits.Sub64(out[j], cut, 0)
			k += int(1 - below)
		}
	}
	clear(hashes[next:])
	return k
}

// sumRunLong1 hashes one run (rankCandidateSet.runs) of ids of n bytes,
// end to end from ids[0], into out, for class w: XXH3's 129–240-byte
// path with one varying window in each round. It lists in sel, from
// position k, the run's candidates (numbered from first) whose hash is
// at least cut, and returns the new count. A loop of its own keeps the
// few values it needs in registers; it hashes two ids a round, their
// chains independent.
func sumRunLong1(w *windowHash, ids []byte, n int, out []uint64, first int32, sel []int32, k int, cut uint64) int {
	v, v2 := w.vw[0], w.vw2[0]
	acc, acc2 := w.acc, w.acc2
	p, j := 0, 0
	for ; j+1 < len(out); j += 2 {
		t, u := (*[idSpan]byte)(ids[p:]), (*[idSpan]byte)(ids[p+n:])
		a0, a1 := acc+v.termAt(t), acc+v.termAt(u)
		b0, b1 := acc2+v2.termAt(t), acc2+v2.termAt(u)
		h0, h1 := xxh3Avalanche(xxh3Avalanche(a0)+b0), xxh3Avalanche(xxh3Avalanche(a1)+b1)
		out[j], out[j+1] = h0, h1
		sel[k] = first + int32(j)
		_, below := bits.Sub64(h0, cut, 0)
		k += int(1 - below)
		sel[k] = first + int32(j+1)
		_, below = bits.Sub64(h1, cut, 0)
		k += int(1 - below)
		p += 2 * n
	}
	if j < len(out) {
		t := (*[idSpan]byte)(ids[p:])
		h := xxh3Avalanche(xxh3Avalanche(acc+v.termAt(t)) + acc2 + v2.termAt(t))
		out[j] = h
		sel[k] = first + int32(j)
		_, below := bits.Sub64(h, cut, 0)
		k += int(1 - below)
	}
	return k
}

// sumRunWordGo is sumRunLong1 for a class whose two varying windows have
// one varying word each (windowHash.word): short ids, whose bytes fall in
// one word of each window. sumRunWord is this loop, in assembly on amd64
// (xxh3word_amd64.s).
func sumRunWordGo(w *windowHash, ids []byte, n int, out []uint64, first int32, sel []int32, k int, cut uint64) int {
	v, v2 := w.w1, w.w2
	acc, acc2 := w.acc, w.acc2
	p, j := 0, 0
	for ; j+1 < len(out); j += 2 {
		t, u := (*[idSpan]byte)(ids[p:]), (*[idSpan]byte)(ids[p+n:])
		a0, a1 := acc+v.termAt(t), acc+v.termAt(u)
		b0, b1 := acc2+v2.termAt(t), acc2+v2.termAt(u)
		h0, h1 := xxh3Avalanche(xxh3Avalanche(a0)+b0), xxh3Avalanche(xxh3Avalanche(a1)+b1)
		out[j], out[j+1] = h0, h1
		sel[k] = first + int32(j)
		_, below := bits.Sub64(h0, cut, 0)
		k += int(1 - below)
		sel[k] = first + int32(j+1)
		_, below = bits.Sub64(h1, cut, 0)
		k += int(1 - below)
		p += 2 * n
	}
	if j < len(out) {
		t := (*[idSpan]byte)(ids[p:])
		h := xxh3Avalanche(xxh3Avalanche(acc+v.termAt(t)) + acc2 + v2.termAt(t))
		out[j] = h
		sel[k] = first + int32(j)
		_, below := bits.Sub64(h, cut, 0)
		k += int(1 - below)
	}
	return k
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

// xxh3Avalanche64Prime is the multiplier of xxh3Avalanche.
const xxh3Avalanche64Prime = 0x165667919E3779F9

// xxh3Avalanche is XXH3's final mixing of an accumulator.
func xxh3Avalanche(x uint64) uint64 {
	x ^= x >> 37
	x *= xxh3Avalanche64Prime
	return x ^ x>>32
}
