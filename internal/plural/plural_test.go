package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 families"}, {1, "1 family"}, {2, "2 families"}} {
		if got := Count(tc.n, "family", "families"); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := Count(int64(1), "warning", "warnings"); got != "1 warning" {
		t.Errorf("Count(int64 1) = %q", got)
	}
	if Noun(uint64(3), "key", "keys") != "keys" {
		t.Error("Noun(3)")
	}
}

func TestShown(t *testing.T) {
	for _, c := range []struct{ total, limit, want int }{
		{0, 3, 0}, {3, 3, 3}, {4, 3, 4}, {5, 3, 3}, {100, 3, 3}, {9, 8, 9}, {10, 8, 8}, {7, 0, 7},
	} {
		if got := Shown(c.total, c.limit); got != c.want {
			t.Errorf("Shown(%d, %d) = %d, want %d", c.total, c.limit, got, c.want)
		}
	}
}
