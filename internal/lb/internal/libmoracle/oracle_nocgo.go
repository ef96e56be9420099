//go:build !cgo

package libmoracle

// Log returns ErrNoCgo: there is no C library without cgo.
func Log(in, out []float64) error { return ErrNoCgo }

// Library returns ErrNoCgo: there is no C library without cgo.
func Library() (Info, error) { return Info{}, ErrNoCgo }
