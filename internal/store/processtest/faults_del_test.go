package processtest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

// TestFaultDelCopyHolderFrozen deletes, with replica count 2, entries whose
// replica is on a member frozen (SIGSTOP) just before, still in the member
// list and the routing table. The owner acknowledges the delete and the
// read after it finds nothing, but the frozen member keeps its copy and
// brings it back when it answers again, so Delete must not say Deleted:
// it reports Unconfirmed, naming the member (before, it said Deleted and
// the entry came back after SIGCONT). Deleted after the member was
// dropped, the entries come back too (the documented blind spot).
func TestFaultDelCopyHolderFrozen(t *testing.T) {
	t.Parallel()
	dmap := "fault-del"
	fc, c, want := startSeeded(t, 2, dmap, 300)
	frozen := fc.members[2].name
	var keys []string
	for k := range want {
		loc := c.Locate(k)
		if loc.Owner != frozen && len(loc.PreviousOwners) == 0 && len(loc.Replicas) == 1 && loc.Replicas[0] == frozen {
			keys = append(keys, k)
		}
		if len(keys) == 3 {
			break
		}
	}
	if len(keys) == 0 {
		t.Fatalf("no key of the 300 has its replica on %s", frozen)
	}
	if err := fc.members[2].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := c.Delete(ctx, keys[0], "")
	t.Logf("delete %s: %v; outcome %s, holders %v, away %v, why %q", keys[0], err, res.Outcome, res.Holders, res.MembersAway, res.Unconfirmed)
	switch {
	case err != nil:
		// Not claimed deleted: acceptable.
	case res.Outcome != store.Unconfirmed:
		t.Errorf("delete with a frozen copy holder: outcome %s, want %s", res.Outcome, store.Unconfirmed)
	case !strings.Contains(res.Unconfirmed, frozen):
		t.Errorf("the reason %q does not name the frozen member %s", res.Unconfirmed, frozen)
	}
	// Once the others have dropped the member, no client can see its copy
	// (docs/store.md, store del): the delete is confirmed at the owners the
	// table names, and says which they are.
	deadline := time.Now().Add(20 * time.Second)
	for {
		ms, err := c.Members(ctx)
		if err == nil && !hasMember(ms, frozen) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still listed 20 s after SIGSTOP", frozen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, k := range keys[1:] {
		res, err := c.Delete(ctx, k, "")
		t.Logf("delete %s after the drop: %v; outcome %s, holders %v, away %v, why %q", k, err, res.Outcome, res.Holders, res.MembersAway, res.Unconfirmed)
		if err == nil && res.Outcome == store.Deleted && (len(res.Holders) == 0 || slices.Contains(res.Holders, frozen)) {
			t.Errorf("deleted: holders %v, want the members the table names (not %s)", res.Holders, frozen)
		}
	}
	fc.recover(freeze, 2)
	// What came back, for the log: the reason the outcome may not be
	// Deleted.
	time.Sleep(2 * time.Second)
	back := 0
	for _, k := range keys {
		if _, err := c.Get(ctx, k); err == nil {
			back++
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Logf("get %s after the thaw: %v", k, err)
		}
	}
	t.Logf("RESULT del with a frozen copy holder: %d of %d entries back after the thaw", back, len(keys))
}
