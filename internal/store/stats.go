package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/olric-data/olric"
	"github.com/olric-data/olric/stats"
)

// Member is one cluster member as CLUSTER.MEMBERS reports it.
type Member struct {
	// Name is the member's RESP address, e.g. "10.1.2.3:3320".
	Name string `json:"name"`
	// Coordinator is true for the oldest member, which owns the routing
	// table.
	Coordinator bool `json:"coordinator"`
	// Birthdate is when the member started.
	Birthdate time.Time `json:"birthdate"`
}

// Members lists the cluster members (CLUSTER.MEMBERS through any member),
// sorted by name.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	var ms []olric.Member
	err := c.do(ctx, func(ctx context.Context) error {
		var err error
		ms, err = c.cc.Members(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		out = append(out, Member{Name: m.Name, Coordinator: m.Coordinator, Birthdate: time.Unix(0, m.Birthdate)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// UnbumpedReleaseVersion is the release_version Olric v0.7.4 (the
// version lcctl is built with, and the gateway's) reports in STATS: the
// ReleaseVersion constant of its olric.go still says 0.7.3.
const UnbumpedReleaseVersion = "0.7.3"

// VersionNote returns the note an operator needs beside a member's
// reported release_version v: for UnbumpedReleaseVersion, that it is
// also what Olric v0.7.4 reports; "" for any other version.
func VersionNote(v string) string {
	if v != UnbumpedReleaseVersion {
		return ""
	}
	return "Olric v0.7.4 also reports " + v + " (its ReleaseVersion constant was not bumped): the member runs v0.7.3 or v0.7.4"
}

// MemberStats is what `lcctl store stats` shows per member.
type MemberStats struct {
	Member
	// Version is the member's release_version from STATS ("" when STATS
	// could not be read). Olric v0.7.4 reports "0.7.3" (its ReleaseVersion
	// constant was not bumped): see VersionNote.
	Version string `json:"version"`
	// VersionNote explains Version when it does not say what it seems to
	// (VersionNote's text for "0.7.3"); "" otherwise.
	VersionNote string `json:"version_note"`
	// UptimeSeconds is the member's uptime in seconds (0 when STATS could
	// not be read).
	UptimeSeconds int64 `json:"uptime_seconds"`
	// PrimaryPartitions and ReplicaPartitions count the partitions the
	// routing table gives the member as current primary and as replica.
	PrimaryPartitions int `json:"primary_partitions"`
	ReplicaPartitions int `json:"replica_partitions"`
	// Entries is the number of entries of the DMap in the partitions this
	// member currently owns as primary (from STATS, including expired
	// entries Olric has not evicted yet).
	Entries int `json:"entries"`
	// BackupEntries is the same for the partitions it holds as replica.
	BackupEntries int `json:"backup_entries"`
	// CurrentConnections and CommandsTotal are the member's network
	// counters.
	CurrentConnections int64 `json:"current_connections"`
	CommandsTotal      int64 `json:"commands_total"`
	// Error says why STATS could not be read from the member; "" when it
	// was read.
	Error string `json:"error"`
}

// ClusterStats is the result of Stats.
type ClusterStats struct {
	// DMap is the DMap counted.
	DMap string `json:"dmap"`
	// Members are the cluster members, sorted by name.
	Members []MemberStats `json:"members"`
	// Partitions is the partition count.
	Partitions int `json:"partitions"`
	// ReplicaCount is the number of copies of each entry the routing
	// table shows (replicaCount): the most common number of distinct
	// members holding a partition (its current primary and its replica
	// owners that are members), over the partitions whose primary is not
	// moving, and never more than the member count. It is below the
	// configured count when there are fewer members than copies.
	ReplicaCount int `json:"replica_count"`
	// MovingPartitions counts partitions with previous owners (data still
	// being handed over).
	MovingPartitions int `json:"moving_partitions"`
	// Entries sums MemberStats.Entries: every partition is counted once, at
	// its current primary owner. EntriesComplete is false when a member's
	// STATS could not be read.
	Entries         int  `json:"entries"`
	EntriesComplete bool `json:"entries_complete"`
	// DMapSeen reports whether any member holds data of the DMap at all; a
	// false value with a non-default DMap name usually means a typo.
	DMapSeen bool `json:"dmap_seen"`
}

// Stats gathers the members (CLUSTER.MEMBERS), the routing table
// (CLUSTER.ROUTINGTABLE) and each member's STATS, and counts the DMap's
// entries per member at the partitions it currently owns (olric.md §5.8),
// so partitions being moved are not counted twice. A member whose STATS
// fails is reported with Error and makes EntriesComplete false; only a
// failure to list members or read the routing table is an error.
func (c *Client) Stats(ctx context.Context) (ClusterStats, error) {
	cs := ClusterStats{DMap: c.opts.DMap, EntriesComplete: true}
	members, err := c.Members(ctx)
	if err != nil {
		return cs, err
	}
	if err := c.refreshRoutes(ctx, false); err != nil {
		return cs, err
	}
	c.mu.Lock()
	rt := c.route
	c.mu.Unlock()
	cs.Partitions = len(rt)
	owner := make(map[uint64]string, len(rt))
	primaries := map[string]int{}
	replicas := map[string]int{}
	cs.ReplicaCount = replicaCount(rt, members)
	for id, r := range rt {
		if n := len(r.PrimaryOwners); n > 0 {
			owner[id] = r.PrimaryOwners[n-1]
			primaries[owner[id]]++
			if n > 1 {
				cs.MovingPartitions++
			}
		}
		for _, m := range r.ReplicaOwners {
			replicas[m]++
		}
	}
	for _, m := range members {
		ms := MemberStats{Member: m, PrimaryPartitions: primaries[m.Name], ReplicaPartitions: replicas[m.Name]}
		var st stats.Stats
		err := c.do(ctx, func(ctx context.Context) error {
			var err error
			st, err = c.cc.Stats(ctx, m.Name)
			return err
		})
		if err != nil {
			ms.Error = err.Error()
			cs.EntriesComplete = false
			cs.Members = append(cs.Members, ms)
			continue
		}
		ms.Version = st.ReleaseVersion
		ms.VersionNote = VersionNote(st.ReleaseVersion)
		ms.UptimeSeconds = st.UptimeSeconds
		ms.CurrentConnections = st.Network.CurrentConnections
		ms.CommandsTotal = st.Network.CommandsTotal
		for id, p := range st.Partitions {
			d, ok := p.DMaps[c.opts.DMap]
			if ok {
				cs.DMapSeen = true
			}
			if ok && owner[uint64(id)] == m.Name {
				ms.Entries += d.Length
			}
		}
		for _, p := range st.Backups {
			if d, ok := p.DMaps[c.opts.DMap]; ok {
				cs.DMapSeen = true
				ms.BackupEntries += d.Length
			}
		}
		cs.Entries += ms.Entries
		cs.Members = append(cs.Members, ms)
	}
	if len(cs.Members) == 0 {
		return cs, errors.New("the cluster reported no members")
	}
	return cs, nil
}

// replicaCount is the number of copies of each entry that the routing
// table rt shows on a cluster of members: for each partition, the
// distinct members among its current primary owner (the last of
// PrimaryOwners) and its ReplicaOwners; the most common of these counts
// over the partitions whose primary is not moving (one primary owner;
// over every partition when all move), the smaller on a tie; at most
// len(members) and at least 1. Olric's routing table
// (internal/cluster/routingtable/distribute.go, v0.7.4) keeps a previous
// owner that still holds data in a partition's owner lists: after a
// member of a 3-member cluster with 2 copies dies, a partition's new
// primary stays in its ReplicaOwners beside the new replica owner until
// another member joins, so 1+len(ReplicaOwners) said 3 copies on 2
// members.
func replicaCount(rt olric.RoutingTable, members []Member) int {
	live := make(map[string]bool, len(members))
	for _, m := range members {
		live[m.Name] = true
	}
	settled, all := map[int]int{}, map[int]int{}
	holders := map[string]bool{}
	for _, r := range rt {
		clear(holders)
		if n := len(r.PrimaryOwners); n > 0 && live[r.PrimaryOwners[n-1]] {
			holders[r.PrimaryOwners[n-1]] = true
		}
		for _, m := range r.ReplicaOwners {
			if live[m] {
				holders[m] = true
			}
		}
		all[len(holders)]++
		if len(r.PrimaryOwners) <= 1 {
			settled[len(holders)]++
		}
	}
	counts := settled
	if len(counts) == 0 {
		counts = all
	}
	best, bestN := 0, 0
	for copies, n := range counts {
		if n > bestN || n == bestN && copies < best {
			best, bestN = copies, n
		}
	}
	return max(1, min(best, len(members)))
}
