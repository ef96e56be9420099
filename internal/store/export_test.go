package store

// WithRescanHook returns o with a function called as each round of the
// scan's rescans after an ownership change starts (round 0 first), with
// the partitions the round scans.
func WithRescanHook(o ScanOptions, f func(round int, partitions []uint64)) ScanOptions {
	o.rescanStarting = f
	return o
}
