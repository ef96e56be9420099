package sim

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
)

// TestClosedReplay: in closed mode a session's next request waits for
// the previous one's end plus the original gap; in open mode it arrives
// at its timestamp and queues behind it.
func TestClosedReplay(t *testing.T) {
	trace := "0,s1,1000,1\n5,s2,1000,1\n10,s1,1000,1\n20,s1,1000,1\n"
	run := func(mode string) *Result {
		sc := mustScenario(t, `
clusters: [{id: a, concurrency: 1, prefill_tps: 1000, decode_tps: 1000, rtt_ms: 0, kv_cache_tokens: 0}]
workload: {trace: t.csv, replay: `+mode+`}
`)
		pols, err := ResolvePolicies(sc, Selection{Names: []string{PolicyRoundRobin}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(sc, &pols[0], RunOptions{Trace: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(trace)), nil }})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	open, closed := run("open"), run("closed")
	if open.Completed != 4 || closed.Completed != 4 {
		t.Fatalf("completed %d and %d", open.Completed, closed.Completed)
	}
	// Each request takes 1 s of prefill + 1 ms of decode on one slot.
	// Open: all four queue at once; the last finishes after about 4 s.
	// Closed: s1's second request starts 10 ms after its first ended
	// (behind s2, which arrived meanwhile), its third 10 ms after that.
	// Timeline (s): s1#1 0–1.001; s2 1.001–2.002; s1#2 issued 1.011,
	// served 2.002–3.003; s1#3 issued 3.013, served 3.013–4.014.
	if d := closed.SimulatedS - 4.014; d < -1e-6 || d > 1e-6 {
		t.Errorf("closed run ends at %.6f s, want 4.014", closed.SimulatedS)
	}
	if !(closed.SimulatedS > open.SimulatedS) {
		t.Errorf("closed run ends at %.3f s, open at %.3f s: the think gaps were not added", closed.SimulatedS, open.SimulatedS)
	}
	if !(closed.TTFTMs.Max < open.TTFTMs.Max) {
		t.Errorf("TTFT max closed %.1f ms, open %.1f ms: closed requests should not queue behind their own session", closed.TTFTMs.Max, open.TTFTMs.Max)
	}
	if _, err := ParseScenario("s.yaml", []byte("clusters: [{id: a}]\nworkload: {replay: closed}\n")); err == nil || !strings.Contains(err.Error(), "closed replay needs workload.trace") {
		t.Errorf("got %v", err)
	}
}

// TestClosedReplayKeepsFileOrder: in closed mode the requests of a session
// that arrive while an earlier one runs are released one at a time in file
// order, however long the session's queue grows and shrinks meanwhile (the
// pending queue wraps around its ring buffer several times here).
func TestClosedReplayKeepsFileOrder(t *testing.T) {
	// s1 sends a request every 600 ms that takes about 1 s to serve, so
	// its queue grows by about one every 1.5 s; s2's requests, one every
	// 450 ms, share the slot and make the waits uneven. Input tokens
	// number each session's requests.
	const n = 120
	var lines []string
	for i := 0; i < n; i++ {
		lines = append(lines, fmt.Sprintf("%06d,s1,%d,1\n", i*600, 1000+i), fmt.Sprintf("%06d,s2,%d,1\n", i*450+1, 100000+i))
	}
	sort.Strings(lines) // by time (zero-padded)
	trace := strings.Join(lines, "")
	sc := mustScenario(t, `
clusters: [{id: a, concurrency: 2, prefill_tps: 1000, decode_tps: 1000, rtt_ms: 0, kv_cache_tokens: 0}]
workload: {trace: t.csv, replay: closed}
`)
	pols, err := ResolvePolicies(sc, Selection{Names: []string{PolicyRoundRobin}})
	if err != nil {
		t.Fatal(err)
	}
	var s1, s2 []uint64
	opt := RunOptions{
		Trace: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(trace)), nil },
		onStep: func(_ *lb.Snapshot, rq *lb.Request, _ lb.Step) {
			if rq.InputTokens >= 100000 {
				s2 = append(s2, rq.InputTokens-100000)
			} else {
				s1 = append(s1, rq.InputTokens-1000)
			}
		},
	}
	res, err := Run(sc, &pols[0], opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 2*n {
		t.Fatalf("completed %d requests, want %d", res.Completed, 2*n)
	}
	for name, got := range map[string][]uint64{"s1": s1, "s2": s2} {
		if len(got) != n {
			t.Fatalf("%s: %d decisions, want %d", name, len(got), n)
		}
		for i, v := range got {
			if v != uint64(i) {
				t.Fatalf("%s: decision %d is for request %d of the file (order %v)", name, i, v, got)
			}
		}
	}
}
