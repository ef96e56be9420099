package preflight

import (
	"context"
	"fmt"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

// StoreProber is the OlricProber of lcctl: store.Probe (connect, list the
// members, write a probe key outside the store key space with a 30 s TTL,
// read it back, delete it, confirm it is gone) with the connection options
// of `lcctl store` (timeouts, TLS, address map). Addrs and DMap come from
// the Probe call.
type StoreProber struct {
	// Options are the connection options; Addrs and DMap are overwritten.
	Options store.Options
}

// Probe implements OlricProber. A failure of the connect or members step
// is a reachability failure; any later failure is a read/write failure.
func (p StoreProber) Probe(ctx context.Context, addrs []string, dmap string) ProbeReport {
	o := p.Options
	o.Addrs, o.DMap = addrs, dmap
	res, err := store.Probe(ctx, o)
	rep := ProbeReport{Members: res.Members}
	reached := false
	for _, s := range res.Steps {
		line := fmt.Sprintf("%s: ok in %s", s.Name, s.Latency.Round(time.Microsecond))
		if !s.OK {
			line = fmt.Sprintf("%s: failed after %s: %s", s.Name, s.Latency.Round(time.Microsecond), s.Error)
		}
		if s.Name != "connect" && s.Name != "members" {
			rep.Details = append(rep.Details, line)
		}
		if s.Name == "members" && s.OK {
			reached = true
		}
	}
	if res.Partitions > 0 {
		rep.Version = fmt.Sprintf("(%d partitions)", res.Partitions)
	}
	switch {
	case err == nil:
	case !reached:
		rep.Reach = err
	default:
		rep.ReadWrite = err
	}
	return rep
}
