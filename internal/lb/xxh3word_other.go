//go:build !amd64 || purego

package lb

// sumRunWord is sumRunWordGo where no assembly loop is built (other
// architectures, or the purego build tag).
func sumRunWord(w *windowHash, ids []byte, n int, out []uint64, first int32, sel []int32, k int, cut uint64) int {
	return sumRunWordGo(w, ids, n, out, first, sel, k, cut)
}
