//go:build race

package sim

// Under the race detector the simulator is about ten times slower, so the
// queueing test runs 20× fewer requests; the standard error grows by
// √20 ≈ 4.5, so the bound is widened to keep it a meaningful check.
const (
	erlangDivisor   = 20
	erlangTolerance = 0.15
)
