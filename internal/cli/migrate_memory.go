package cli

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"

	"github.com/lcctl/lcctl/internal/validate"
)

// The heap `lcctl migrate` may reach per input byte before the collector
// is made to run, measured on the 124,000-model configs of
// docs/performance.md (migrate scale section). JSON: the live peak is
// 11.3 bytes per byte (180 MB for 15.9 MB), and 12 plus migrateHeadroom
// kept the RSS at 270–298 MB for 1.3–2.2 s of CPU. YAML: the live peak
// is 24.2 bytes per byte (370 MB for 15.3 MB: yaml.v3's node trees), but
// yaml.v3 leaves much garbage, and a limit near the live peak doubled
// the CPU (420 MiB: 5.1 s against 2.8 s without a limit); 32 keeps the
// RSS near 530 MB (750 MB without) for about a second more CPU.
const (
	migrateLiveJSON = 12
	migrateLiveYAML = 32
	migrateHeadroom = 24 << 20
)

// memoryLimit is the soft memory limit (debug.SetMemoryLimit) `lcctl
// migrate` sets for its run: a backstop on top of the live-heap cuts of
// issue 14, not a replacement for them. By default (GOGC=100) Go lets the
// heap grow to twice the live set before it collects, which on the
// issue's 15.9 MB file (180 MB live) was 500 MB of RSS; with the limit
// the collector runs once the heap reaches the live estimate of the
// largest input so far plus migrateHeadroom, plus what the process held
// when that input was read (the reports of earlier files). The limit
// only makes the collector run sooner: a heap that needs more is not
// refused, and the runtime caps the collector's share of the CPU. A
// limit already in place (GOMEMLIMIT, GOMEMLIMIT=off included, or a
// caller's) is kept: nothing is changed. The zero value is ready; restore puts the previous limit
// back.
type memoryLimit struct {
	set  bool
	prev int64
	cur  int64
}

// raise makes the limit cover the migration of one input of n bytes in
// format f.
func (l *memoryLimit) raise(n int, f validate.Format) {
	if !l.set {
		l.prev = debug.SetMemoryLimit(-1)
		if _, given := os.LookupEnv("GOMEMLIMIT"); given || l.prev != math.MaxInt64 {
			return // GOMEMLIMIT (off included) or a caller's limit: kept
		}
		l.set = true
	}
	per := int64(migrateLiveJSON)
	if f == validate.FormatYAML {
		per = migrateLiveYAML
	}
	if want := liveHeap() + per*int64(n) + migrateHeadroom; want > l.cur {
		l.cur = want
		debug.SetMemoryLimit(want)
	}
}

// restore puts back the limit there was before the first raise.
func (l *memoryLimit) restore() {
	if l.set {
		debug.SetMemoryLimit(l.prev)
		*l = memoryLimit{}
	}
}

// liveHeap returns the heap the last collection found live, in bytes.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
