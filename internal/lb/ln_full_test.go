//go:build !race

package lb

// Full size: the oracle test compares all 10.5 million inputs (about 0.5 s).
const lnOracleDivisor = 1
