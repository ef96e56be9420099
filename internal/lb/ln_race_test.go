//go:build race

package lb

// Under the race detector the oracle test compares a tenth of its inputs
// (about 8 s in full); .ci/run also runs it at full size without the race
// detector.
const lnOracleDivisor = 10
