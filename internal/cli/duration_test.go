package cli

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{3400 * time.Microsecond, "3ms"},
		{988356231 * time.Nanosecond, "990ms"},
		{1234567890 * time.Nanosecond, "1.23s"},
		{9994 * time.Millisecond, "9.99s"},
		{12600 * time.Millisecond, "13s"},
		{9*time.Minute + 29600*time.Millisecond, "9m30s"},
		{10 * time.Minute, "10m"},
		{time.Hour + 200*time.Millisecond, "1h"},
		{time.Hour + 5*time.Second, "1h0m5s"},
	} {
		if got := humanDuration(tc.d); got != tc.want {
			t.Errorf("humanDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
