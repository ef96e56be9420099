package store

import (
	"errors"
	"runtime"
	"strings"
)

// refusedRefreshText marks the error iterRefreshGuard returns; the olric
// client logs it. (olric's error translation drops an error's first word,
// so the marker is the rest.)
const refusedRefreshText = "lcctl skips the iterator's routing-table refresh"

// errIteratorRefreshRefused is what iterRefreshGuard answers to the
// iterator's background routing-table refresh.
var errIteratorRefreshRefused = errors.New("refused: " + refusedRefreshText)

// iteratorRefresher is the olric v0.7.4 function that refreshes a
// ClusterIterator's routing table every second while it is open.
const iteratorRefresher = "olric.(*ClusterIterator).fetchRoutingTablePeriodically"

// iterRefreshGuard is a go-redis Limiter that refuses the commands sent by
// olric's ClusterIterator background refresher and allows every other
// command.
//
// olric v0.7.4's ClusterIterator replaces its routing table and partition
// count from that goroutine under a mutex that Next does not take
// (cluster_iterator.go fetchRoutingTable versus next/getOwners): a data
// race on every scan that lasts over a second. Refusing the refresh's
// CLUSTER.ROUTINGTABLE makes fetchRoutingTable return before it writes,
// so the iterator keeps the table it fetched when it was created. Scan
// watches the routing table itself and restarts the iterator when owners
// change (see Client.produceKeys), which also covers what the refresh
// was for.
//
// go-redis calls Allow in the goroutine that sends the command, so the
// refresher is recognised by its frame on the caller's stack.
type iterRefreshGuard struct{}

// Allow refuses the command when the iterator's refresher sends it.
func (iterRefreshGuard) Allow() error {
	var pcs [24]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, iteratorRefresher) {
			return errIteratorRefreshRefused
		}
		if !more {
			return nil
		}
	}
}

// ReportResult is part of the go-redis Limiter interface; nothing to do.
func (iterRefreshGuard) ReportResult(error) {}
