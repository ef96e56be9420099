package store

import "testing"

// partList never folds a single partition into "and 1 more".
func TestPartListFoldsTwoOrMore(t *testing.T) {
	for n, want := range map[int]string{
		1:  "partition 0",
		9:  "partitions 0, 1, 2, 3, 4, 5, 6, 7, 8",
		10: "partitions 0, 1, 2, 3, 4, 5, 6, 7 and 2 more",
	} {
		ps := make([]uint64, n)
		for i := range ps {
			ps[i] = uint64(i)
		}
		if got := partList(ps); got != want {
			t.Errorf("partList(%d partitions) = %q, want %q", n, got, want)
		}
	}
}
