package store

import (
	"testing"

	"github.com/olric-data/olric"
)

// TestReplicaCount: the most common number of distinct live holders over
// partitions whose primary is not moving, the smaller on a tie, never
// more than the members.
func TestReplicaCount(t *testing.T) {
	members := []Member{{Name: "a"}, {Name: "b"}}
	for _, tc := range []struct {
		name string
		rt   olric.RoutingTable
		want int
	}{
		{"primary also listed as replica (after a member died)", olric.RoutingTable{
			0: {PrimaryOwners: []string{"a"}, ReplicaOwners: []string{"a", "b"}},
			1: {PrimaryOwners: []string{"b"}, ReplicaOwners: []string{"a"}},
			2: {PrimaryOwners: []string{"b"}, ReplicaOwners: []string{"b", "a"}},
		}, 2},
		{"dead member in the lists", olric.RoutingTable{
			0: {PrimaryOwners: []string{"a"}, ReplicaOwners: []string{"c"}},
			1: {PrimaryOwners: []string{"b"}, ReplicaOwners: []string{"c"}},
		}, 1},
		{"moving partitions are not counted", olric.RoutingTable{
			0: {PrimaryOwners: []string{"a"}},
			1: {PrimaryOwners: []string{"b", "a"}, ReplicaOwners: []string{"b"}},
			2: {PrimaryOwners: []string{"a", "b"}, ReplicaOwners: []string{"a"}},
		}, 1},
		{"all moving: every partition counts", olric.RoutingTable{
			1: {PrimaryOwners: []string{"b", "a"}, ReplicaOwners: []string{"b"}},
		}, 2},
		{"tie: the smaller", olric.RoutingTable{
			0: {PrimaryOwners: []string{"a"}},
			1: {PrimaryOwners: []string{"b"}, ReplicaOwners: []string{"a"}},
		}, 1},
		{"empty table", olric.RoutingTable{}, 1},
	} {
		if got := replicaCount(tc.rt, members); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
