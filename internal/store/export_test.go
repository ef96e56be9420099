package store

import "context"

// WithRescanHook returns o with a function called as each round of the
// scan's rescans after an ownership change starts (round 0 first), with
// the partitions the round scans.
func WithRescanHook(o ScanOptions, f func(round int, partitions []uint64)) ScanOptions {
	o.rescanStarting = f
	return o
}

// ReadRoutes reports whether c read the routing table and the members
// (Client.readRoutes, as the run's poller does).
func ReadRoutes(c *Client) bool {
	rt, ms := c.readRoutes(context.Background())
	return rt != nil && ms != nil
}

// PingAddr pings addr through the olric client, which (like every call
// naming an address) adds addr to the addresses it asks in turn.
func PingAddr(c *Client, addr string) error {
	_, err := c.cc.Ping(context.Background(), addr, "")
	return err
}
