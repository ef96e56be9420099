package processtest

import (
	"context"
	"testing"
	"time"
)

// TestStatsReplicaCountAfterMemberDies: three olric-server members with
// 2 copies, one killed (SIGKILL) and dropped from the cluster. Olric then
// keeps a partition's new primary in its replica owners beside the new
// replica owner (distribute.go keeps a replica that holds data until a
// member joins), so 1+len(ReplicaOwners) said "replica count 3" on two
// members. Stats must say 2 every time it is asked, while the table
// settles and after.
func TestStatsReplicaCountAfterMemberDies(t *testing.T) {
	t.Parallel()
	fc, c, _ := startSeeded(t, 2, "stats-replicas", 600)
	if st, err := c.Stats(context.Background()); err != nil || st.ReplicaCount != 2 {
		t.Fatalf("before the kill: replica count %d, err %v; want 2", st.ReplicaCount, err)
	}
	fc.inject(kill, 2, c)
	deadline := time.Now().Add(faultSettle)
	asked := 0
	for time.Now().Before(deadline) {
		st, err := c.Stats(context.Background())
		if err != nil {
			t.Logf("stats: %v", err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		asked++
		if st.ReplicaCount != 2 || st.ReplicaCount > len(st.Members) {
			t.Fatalf("%d members, %d partitions moving: replica count %d, want 2", len(st.Members), st.MovingPartitions, st.ReplicaCount)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if asked == 0 {
		t.Fatal("stats never answered after the kill")
	}
}
