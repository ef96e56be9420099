package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/olric-data/olric"
)

// Entry is one last-cluster entry as read from Olric.
type Entry struct {
	// Key is the store key.
	Key string `json:"key"`
	// Cluster is the stored value, the Stargate cluster ID, as raw bytes.
	Cluster string `json:"cluster"`
	// Valid reports whether Cluster passes the gateway's value rule
	// (ValidateValue); the gateway treats an invalid value as a miss.
	Valid bool `json:"valid"`
	// ExpiresAt is the absolute expiry (Olric keeps it in Unix ms); zero
	// means the entry never expires.
	ExpiresAt time.Time `json:"-"`
	// WrittenAt is the time of the last write (Olric's entry timestamp,
	// Unix ns).
	WrittenAt time.Time `json:"-"`
	// ReadAt is when lcctl read the entry; TTL is relative to it.
	ReadAt time.Time `json:"-"`
	// timestamp is Olric's raw write timestamp (Unix ns), used to tell a
	// rewrite from the same write.
	timestamp int64
}

// TTL returns the remaining lifetime at ReadAt, rounded down to whole
// milliseconds, or -1 when the entry never expires. It is 0 for an entry
// whose expiry has passed but that Olric still returned.
func (e Entry) TTL() time.Duration {
	if e.ExpiresAt.IsZero() {
		return -1
	}
	d := e.ExpiresAt.Sub(e.ReadAt).Truncate(time.Millisecond)
	if d < 0 {
		return 0
	}
	return d
}

// entryFrom converts olric's GetResponse.
func entryFrom(key string, r *olric.GetResponse, now time.Time) (Entry, error) {
	v, err := r.String()
	if err != nil {
		return Entry{}, fmt.Errorf("decode value of %s: %w", key, err)
	}
	e := Entry{Key: key, Cluster: v, Valid: ValidateValue(v) == nil, ReadAt: now, timestamp: r.Timestamp()}
	if ms := r.TTL(); ms > 0 {
		e.ExpiresAt = time.UnixMilli(ms)
	}
	if ts := r.Timestamp(); ts > 0 {
		e.WrittenAt = time.Unix(0, ts)
	}
	return e, nil
}

// Get reads one entry (DM.GET with the raw-entry flag, sent to the key's
// partition owner). It validates key first (ValidateKey). It returns an
// error wrapping ErrNotFound when the key is absent or expired, and
// ErrUnreachable or ErrTimeout after Options.Attempts tries.
func (c *Client) Get(ctx context.Context, key string) (Entry, error) {
	if err := ValidateKey(key); err != nil {
		return Entry{}, err
	}
	e, err := c.get(ctx, key)
	if err != nil {
		return Entry{}, c.keyErr("get", key, err)
	}
	return e, nil
}

func (c *Client) get(ctx context.Context, key string) (Entry, error) {
	var e Entry
	err := c.do(ctx, func(ctx context.Context) error {
		r, err := c.dm.Get(ctx, key)
		if err != nil {
			return err
		}
		e, err = entryFrom(key, r, time.Now())
		return err
	})
	return e, err
}

// keyErr says what failed and where: the operation, the partition and the
// member that owns it.
func (c *Client) keyErr(op, key string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%s: key not in dmap %q: %w", op, c.opts.DMap, err)
	}
	loc := c.Locate(key)
	return fmt.Errorf("%s (dmap %q, partition %d, owner %s): %w", op, c.opts.DMap, loc.Partition, loc.Owner, err)
}

// PutMode chooses Put's existence condition.
type PutMode int

// Put modes (olric NX and XX options).
const (
	// PutAlways overwrites or creates, as the gateway's own write does.
	PutAlways PutMode = iota
	// PutIfAbsent writes only when the key is absent (NX).
	PutIfAbsent
	// PutIfPresent writes only when the key exists (XX).
	PutIfPresent
)

// ErrConditionNotMet is returned by Put when PutIfAbsent found the key or
// PutIfPresent did not.
var ErrConditionNotMet = errors.New("condition not met")

// Put writes cluster under key with the given TTL exactly as the gateway's
// write does: the raw bytes of cluster with PX set to ttl in milliseconds
// (gateway.md §5.1). It refuses, before sending anything, a key outside
// the store key form (ValidateKey), a value the gateway would never store
// (ValidateValue) and a TTL Olric would turn into "no expiry"
// (ValidateTTL). A write replaces the entry and resets its TTL.
func (c *Client) Put(ctx context.Context, key, cluster string, ttl time.Duration, mode PutMode) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ValidateValue(cluster); err != nil {
		return err
	}
	if err := ValidateTTL(ttl); err != nil {
		return err
	}
	opts := []olric.PutOption{olric.PX(ttl)}
	switch mode {
	case PutAlways:
	case PutIfAbsent:
		opts = append(opts, olric.NX())
	case PutIfPresent:
		opts = append(opts, olric.XX())
	default:
		return fmt.Errorf("unknown put mode %d", mode)
	}
	err := c.do(ctx, func(ctx context.Context) error {
		return c.dm.Put(ctx, key, cluster, opts...)
	})
	switch {
	case err == nil:
		return nil
	case mode == PutIfAbsent && errors.Is(err, olric.ErrKeyFound):
		return fmt.Errorf("put: key already exists: %w", ErrConditionNotMet)
	case mode == PutIfPresent && errors.Is(err, ErrNotFound):
		return fmt.Errorf("put: key does not exist: %w", ErrConditionNotMet)
	}
	return c.keyErr("put", key, err)
}

// DeleteOutcome says what Delete found and did.
type DeleteOutcome string

// Delete outcomes.
const (
	// Deleted: the entry existed (with the expected value, if one was
	// given) and a read after the delete found it gone at the current
	// owners, with every member that holds a copy of its partition in the
	// member list and answering, and the routing table and the member
	// list unchanged throughout (see confirmAbsent).
	Deleted DeleteOutcome = "deleted"
	// Unconfirmed: the delete was sent and the read after it found the
	// entry gone, but a copy may remain on a member the read did not reach
	// (DeleteResult.Unconfirmed says why): it comes back when that member
	// answers again. Run the delete again after the member returns or is
	// removed.
	Unconfirmed DeleteOutcome = "unconfirmed"
	// Absent: there was no entry to delete; nothing was sent.
	Absent DeleteOutcome = "absent"
	// Changed: the entry holds another cluster than the expected one; it
	// was left alone.
	Changed DeleteOutcome = "changed"
	// Rewritten: the delete went through but the entry was written again
	// (a newer write timestamp) before the confirming read.
	Rewritten DeleteOutcome = "rewritten"
)

// DeleteResult reports one Delete.
type DeleteResult struct {
	// Key is the store key.
	Key string `json:"key"`
	// Outcome is what happened.
	Outcome DeleteOutcome `json:"outcome"`
	// Before is the entry read before deleting (zero when Absent).
	Before Entry `json:"-"`
	// After is the entry read after deleting, when one was found.
	After *Entry `json:"-"`
	// Holders are the members the routing table named, when the call
	// started, as holding a copy of the key's partition (previous and
	// current primary owners, then the replica owners): where a Deleted
	// entry was confirmed absent. Set for Deleted and Unconfirmed.
	Holders []string `json:"-"`
	// MembersAway are the members of the start missing from the member
	// list at some read during the call, sorted (Deleted and Unconfirmed).
	MembersAway []string `json:"-"`
	// Unconfirmed says why an Unconfirmed outcome is not Deleted.
	Unconfirmed string `json:"-"`
}

// Delete removes one entry and reports what really happened, because
// Olric's delete reply counts keys given, not keys removed (olric.md
// §5.4): it reads the entry, returns Absent when there is none and Changed
// when ifCluster is not empty and the entry holds another value, otherwise
// sends DM.DEL for this single key, then reads again. A read that finds the
// same write again gets one more try (see rewriteAndDelete); an entry that
// survives that is an error. An entry read as gone is Deleted only when
// nothing during the call leaves room for a copy elsewhere (confirmAbsent):
// the routing table and the member list are read before the first read
// and polled until the last, as Scan and Evict do, and the members holding
// a copy of the key's partition are pinged; otherwise it is Unconfirmed.
func (c *Client) Delete(ctx context.Context, key, ifCluster string) (DeleteResult, error) {
	res := DeleteResult{Key: key}
	if err := ValidateKey(key); err != nil {
		return res, err
	}
	if ifCluster != "" {
		if err := ValidateValue(ifCluster); err != nil {
			return res, err
		}
	}
	ctx, _, release := c.withDownWatch(ctx, DefaultSettleTimeout)
	defer release()
	tr := c.trackRoutes(ctx)
	defer tr.close()
	before, err := c.get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		res.Outcome = Absent
		return res, nil
	case err != nil:
		return res, c.keyErr("delete: read before delete", key, err)
	}
	res.Before = before
	if ifCluster != "" && before.Cluster != ifCluster {
		res.Outcome = Changed
		return res, nil
	}
	err = c.do(ctx, func(ctx context.Context) error {
		_, err := c.dm.Delete(ctx, key)
		return err
	})
	if err != nil {
		return res, c.keyErr("delete", key, err)
	}
	after, err := c.get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		res.Outcome = c.confirmAbsent(ctx, tr, &res)
		return res, nil
	case err != nil:
		return res, c.keyErr("delete: read after delete", key, err)
	}
	res.After = &after
	if after.timestamp != before.timestamp {
		res.Outcome = Rewritten
		return res, nil
	}
	gone, cur, err := c.rewriteAndDelete(ctx, key, before.Cluster)
	switch {
	case err != nil:
		return res, c.keyErr("delete", key, err)
	case gone:
		res.After = nil
		res.Outcome = c.confirmAbsent(ctx, tr, &res)
	default:
		res.Outcome, res.After = Changed, &cur
	}
	return res, nil
}

// rewriteAndDelete is the fallback for a delete that Olric acknowledged
// without removing the entry. After a membership change a partition's new
// owner may not hold its entries yet (Olric's balancer moves them, every
// 15 s by default); reads still find the old copy on a previous owner or a
// replica, but olric v0.7.4's DM.DEL removes nothing unless the owner
// itself holds the key (internal/dmap/delete.go, deleteKey). Writing the
// same value again, with the remaining TTL, puts a copy on the owner; the
// delete that follows then removes the key on the owner, the previous
// owners and the replicas.
//
// It first re-reads the entry: gone reports true when it is gone (before
// or after), and when it no longer holds want it is left alone and
// returned as cur with gone false. A write by a gateway landing between
// that re-read and the rewrite is overwritten and deleted, the same sub-
// millisecond window every delete without compare-and-delete has.
func (c *Client) rewriteAndDelete(ctx context.Context, key, want string) (gone bool, cur Entry, err error) {
	cur, err = c.get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return true, Entry{}, nil
	case err != nil:
		return false, cur, fmt.Errorf("re-read: %w", err)
	case cur.Cluster != want:
		return false, cur, nil
	}
	ttl := cur.TTL()
	switch {
	case ttl < 0:
		ttl = DefaultTTL // the gateway always sets a TTL; it is deleted at once anyway
	case ttl < time.Millisecond:
		ttl = time.Millisecond
	}
	if err := c.do(ctx, func(ctx context.Context) error { return c.dm.Put(ctx, key, want, olric.PX(ttl)) }); err != nil {
		return false, cur, fmt.Errorf("rewrite on the partition owner: %w", err)
	}
	if err := c.do(ctx, func(ctx context.Context) error { _, err := c.dm.Delete(ctx, key); return err }); err != nil {
		return false, cur, fmt.Errorf("delete after rewriting: %w", err)
	}
	after, err := c.get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return true, Entry{}, nil
	case err != nil:
		return false, cur, fmt.Errorf("confirm: %w", err)
	}
	return false, after, errors.New("the entry is still present after the delete, also after rewriting it on the partition owner")
}
