//go:build !race

package sim

// Full-size queueing test: 10 million requests take a few seconds.
const (
	erlangDivisor   = 1
	erlangTolerance = 0.03
)
