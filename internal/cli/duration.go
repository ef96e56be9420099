package cli

import (
	"strings"
	"time"
)

// humanDuration renders d for people (the one rounding of durations lcctl
// measured or computed itself, such as a wait's pause or a run's elapsed
// time): to the millisecond under 100 ms, to 10 ms under 10 s, to the
// second above, without trailing zero units ("10m", "1h", "2m30s").
func humanDuration(d time.Duration) string {
	switch {
	case d < 100*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(10 * time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
