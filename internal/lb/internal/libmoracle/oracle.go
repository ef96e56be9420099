// Package libmoracle calls the C library's math functions for tests that
// check the engine's pure-Go reproductions bit for bit (internal/lb's
// Ln against glibc's log). Only tests import it, so the lcctl binary stays
// free of cgo; without cgo (no C compiler, CGO_ENABLED=0) every function
// returns ErrNoCgo.
package libmoracle

import "errors"

// ErrNoCgo is returned when the package was built without cgo, so there is
// no C library to ask.
var ErrNoCgo = errors.New("libmoracle: built without cgo: the C library oracle needs a C compiler (gcc or clang on PATH) and CGO_ENABLED=1")

// Info describes the C library the oracle calls.
type Info struct {
	// Library is "glibc 2.36"-style text, or "unknown C library" when it
	// is not glibc.
	Library string
	// FMA reports whether the CPU has FMA and AVX2, the features glibc's
	// x86_64 ifunc needs to select its FMA build of log (__log_fma).
	FMA bool
}
