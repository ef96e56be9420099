//go:build cgo

package libmoracle

/*
#cgo LDFLAGS: -lm
#include <math.h>
#include <stddef.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

static void oracle_log(const double *in, double *out, size_t n) {
	for (size_t i = 0; i < n; i++) out[i] = log(in[i]);
}

static const char *oracle_library(void) {
#ifdef __GLIBC__
	return gnu_get_libc_version();
#else
	return "";
#endif
}

static int oracle_fma(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}
*/
import "C"

import "unsafe"

// Log sets out[i] = log(in[i]) with the C library's log, one C call for
// the whole slice. It panics if out is shorter than in.
func Log(in, out []float64) error {
	if len(in) == 0 {
		return nil
	}
	_ = out[len(in)-1]
	C.oracle_log((*C.double)(unsafe.Pointer(&in[0])), (*C.double)(unsafe.Pointer(&out[0])), C.size_t(len(in)))
	return nil
}

// Library describes the C library and the CPU features that select its
// log variant.
func Library() (Info, error) {
	info := Info{Library: "unknown C library", FMA: C.oracle_fma() != 0}
	if v := C.GoString(C.oracle_library()); v != "" {
		info.Library = "glibc " + v
	}
	return info, nil
}
