package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/olric-data/olric"
)

// ProbeKeyPrefix starts the key of a probe entry. It is not a store key
// ("lc:v1:"), so a scan never lists it and no gateway ever reads it.
const ProbeKeyPrefix = "lcctl:probe:"

// probeValue is what a probe writes; probeTTL bounds its life should the
// delete fail.
const (
	probeValue = "lcctl-probe"
	probeTTL   = 30 * time.Second
)

// ProbeStep is one step of a probe.
type ProbeStep struct {
	// Name is "connect", "members", "write", "read", "delete" or
	// "confirm".
	Name string `json:"name"`
	// OK reports whether the step succeeded.
	OK bool `json:"ok"`
	// Latency is the step's wall time; LatencyMs the same in milliseconds.
	Latency   time.Duration `json:"-"`
	LatencyMs float64       `json:"latency_ms"`
	// Error says why the step failed; "" when it succeeded.
	Error string `json:"error"`
}

// ProbeResult is the outcome of Probe.
type ProbeResult struct {
	// DMap is the DMap probed.
	DMap string `json:"dmap"`
	// Members are the member names the cluster reported.
	Members []string `json:"members"`
	// Partitions is the partition count.
	Partitions uint64 `json:"partitions"`
	// Readable and Writable summarise the steps: the probe entry could be
	// written, read back with the same value, deleted and found gone.
	Readable bool `json:"readable"`
	Writable bool `json:"writable"`
	// Steps lists every step run, in order; a failed step ends the probe
	// except that delete is always attempted after a successful write.
	Steps []ProbeStep `json:"steps"`
}

// Probe connects with opts and checks that the DMap is readable and
// writable, for preflight checks: it writes a probe entry under a random
// key outside the store key space (ProbeKeyPrefix + 32 hex digits) with a
// 30 s TTL, reads it back, deletes it and confirms it is gone. The returned
// error is the first failure (wrapping ErrUnreachable, ErrTimeout, ErrAuth
// or ErrNotFound as appropriate); the result is filled either way.
func Probe(ctx context.Context, opts Options) (ProbeResult, error) {
	res := ProbeResult{DMap: opts.DMap}
	if res.DMap == "" {
		res.DMap = DMapName
	}
	t0 := time.Now()
	c, err := Connect(ctx, opts)
	res.Steps = append(res.Steps, step("connect", t0, err))
	if err != nil {
		return res, err
	}
	defer c.Close()
	r, err := c.Probe(ctx)
	r.Steps = append(res.Steps, r.Steps...)
	return r, err
}

// Probe runs the write/read/delete/confirm steps of the package-level
// Probe on an open client, and lists the members.
func (c *Client) Probe(ctx context.Context) (ProbeResult, error) {
	res := ProbeResult{DMap: c.opts.DMap, Partitions: c.PartitionCount()}
	t0 := time.Now()
	members, err := c.Members(ctx)
	res.Steps = append(res.Steps, step("members", t0, err))
	if err != nil {
		return res, err
	}
	for _, m := range members {
		res.Members = append(res.Members, m.Name)
	}
	var rnd [16]byte
	_, _ = rand.Read(rnd[:])
	key := ProbeKeyPrefix + hex.EncodeToString(rnd[:])

	t0 = time.Now()
	err = c.do(ctx, func(ctx context.Context) error { return c.dm.Put(ctx, key, probeValue, olric.PX(probeTTL)) })
	res.Steps = append(res.Steps, step("write", t0, err))
	if err != nil {
		return res, fmt.Errorf("probe write: %w", err)
	}
	res.Writable = true

	t0 = time.Now()
	var got string
	err = c.do(ctx, func(ctx context.Context) error {
		r, err := c.dm.Get(ctx, key)
		if err != nil {
			return err
		}
		got, err = r.String()
		return err
	})
	if err == nil && got != probeValue {
		err = fmt.Errorf("read back %q, wrote %q", got, probeValue)
	}
	res.Steps = append(res.Steps, step("read", t0, err))
	readErr := err
	res.Readable = err == nil

	t0 = time.Now()
	err = c.do(ctx, func(ctx context.Context) error { _, err := c.dm.Delete(ctx, key); return err })
	res.Steps = append(res.Steps, step("delete", t0, err))
	if readErr != nil {
		return res, fmt.Errorf("probe read: %w", readErr)
	}
	if err != nil {
		res.Writable = false
		return res, fmt.Errorf("probe delete (the probe entry expires in %v): %w", probeTTL, err)
	}

	t0 = time.Now()
	err = c.do(ctx, func(ctx context.Context) error { _, err := c.dm.Get(ctx, key); return err })
	switch {
	case errors.Is(err, ErrNotFound):
		err = nil
	case err == nil:
		err = errors.New("the probe entry is still present after the delete")
	}
	res.Steps = append(res.Steps, step("confirm", t0, err))
	if err != nil {
		res.Writable = false
		return res, fmt.Errorf("probe confirm: %w", err)
	}
	return res, nil
}

func step(name string, t0 time.Time, err error) ProbeStep {
	d := time.Since(t0)
	s := ProbeStep{Name: name, OK: err == nil, Latency: d, LatencyMs: float64(d.Microseconds()) / 1000}
	if err != nil {
		s.Error = err.Error()
	}
	return s
}
