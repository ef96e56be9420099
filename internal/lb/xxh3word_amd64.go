//go:build amd64 && !purego

package lb

// wordLoop holds what sumWordsAsm reads of a windowHash with one varying
// word in each round (windowHash.word), at fixed offsets: each window's
// other word, fixed part and 2^by (varyingWord), the two rounds' shared
// terms, the avalanche's prime and the selection cut.
type wordLoop struct {
	o1, f1, m1 uint64
	o2, f2, m2 uint64
	acc, acc2  uint64
	prime, cut uint64
}

// sumWordsAsm is sumRunWordGo's loop in assembly (xxh3word_amd64.s): for
// each j < len(out) it reads the words at p1 and p2 advanced by j·n
// bytes, sets out[j] to the hash and sel[k] to first + j, and adds 1 to k
// when out[j] ≥ c.cut; it returns the new k. The caller checks that
// every word read and every sel entry written lie within their slices.
//
//go:noescape
func sumWordsAsm(c *wordLoop, p1, p2 *byte, n int, out []uint64, sel *int32, k int, first int32) int

// sumRunWord is sumRunWordGo, its loop in assembly: one chain a
// candidate, every constant read from memory, about half the
// instructions the compiled loop takes (its spills and bounds checks).
func sumRunWord(w *windowHash, ids []byte, n int, out []uint64, first int32, sel []int32, k int, cut uint64) int {
	if len(out) == 0 {
		return k
	}
	a1, a2 := int(w.w1.at&63), int(w.w2.at&63)
	last := (len(out) - 1) * n
	// The last words read, and the last sel entry written, are in
	// bounds: a panic here rather than a read or write past them.
	_, _ = ids[last+a1+7], ids[last+a2+7]
	_ = sel[k+len(out)-1]
	c := wordLoop{
		o1: w.w1.other, f1: w.w1.fixed, m1: w.w1.mul,
		o2: w.w2.other, f2: w.w2.fixed, m2: w.w2.mul,
		acc: w.acc, acc2: w.acc2, prime: xxh3Avalanche64Prime, cut: cut,
	}
	return sumWordsAsm(&c, &ids[a1], &ids[a2], n, out, &sel[0], k, first)
}
