package lb

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"pgregory.net/rapid"
)

const (
	sllW1 = "http://w1:8000"
	sllW2 = "http://w2:8000"
	sllW3 = "http://w3:8000"
)

var sllWorkers = []string{sllW1, sllW2, sllW3}

func TestMurmur64AVectors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0x4d408de62dee109a},
		{"abc", 0xc79f4a6608ed5fd8},
		{"abcdefghij", 0xf4d10e3541f22235},
	} {
		if got := Murmur64A([]byte(c.in), fbiSeed); got != c.want {
			t.Errorf("murmur64a(%q) = %016x, want %016x", c.in, got, c.want)
		}
	}
}

// TestFBIHashVectors checks the §5.3 vectors of sticky-least-loaded.md.
func TestFBIHashVectors(t *testing.T) {
	for _, c := range []struct {
		in   string
		furc uint32
		hash uint64
	}{
		{"", 6173600, 0xc0663e029346e424},
		{"a", 7695180, 0x29d1ab12ec5fea11},
		{"sess-1", 915702, 0xf082ab0a88e0c931},
		{`session-"quoted\path`, 4755509, 0x10550fc1e40e82ec},
		{"日本語セッション", 3818140, 0x0e4cf033a257a550},
		{"sess-1:http://w1:8000", 2245869, 0xd1ea4f89195c1525},
		{"sess-1:http://w2:8000", 3773450, 0x5482c5c05c53f494},
		{"sess-1:http://w3:8000", 7431851, 0x5f296fe2433ac1a5},
		{"traj-42:http://w1:8000", 7691555, 0x798ac18dfd965510},
		{"traj-42:http://w2:8000", 1453888, 0x3295a00ff2521d99},
	} {
		if got := Furc([]byte(c.in), fbiFurcRange); got != c.furc {
			t.Errorf("furc(%q) = %d, want %d", c.in, got, c.furc)
		}
		if got := FBIHash(c.in); got != c.hash {
			t.Errorf("fbi_hash(%q) = %016x, want %016x", c.in, got, c.hash)
		}
	}
	// §10 tie-break weights.
	weights := map[string][3]uint64{
		"sess-2":  {0xfcfb907e50cbda21, 0x1fc5091a55db0920, 0x558290e8b68589b8},
		"sess-3":  {0x43d76800751ced75, 0xd9e2d564ef05b1bd, 0xd8467ca4ccc39269},
		"sess-4":  {0x25c2c91354ecf770, 0x88ba06a6162750c5, 0x471703ab354d0cae},
		"sess-5":  {0xe9ff673967800277, 0xb853fc807f8b5107, 0x96a7295609bfca14},
		"traj-42": {0x798ac18dfd965510, 0x3295a00ff2521d99, 0x7c2b8a12a03d832f},
	}
	for id, w := range weights {
		for i, url := range sllWorkers {
			if got := FBIHash(id + ":" + url); got != w[i] {
				t.Errorf("fbi_hash(%s:%s) = %016x, want %016x", id, url, got, w[i])
			}
		}
	}
}

func TestFurcSmallRanges(t *testing.T) {
	if Furc([]byte("x"), 0) != 0 || Furc([]byte("x"), 1) != 0 {
		t.Fatal("furc with m ≤ 1 must be 0")
	}
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOf(rapid.Byte()).Draw(t, "key")
		m := rapid.Uint32Range(2, 1<<31).Draw(t, "m")
		if got := Furc(key, m); got >= m {
			t.Fatalf("furc = %d ≥ m = %d", got, m)
		}
	})
}

func sllCounts(p *StickyLeastLoaded) [3]int {
	return [3]int{p.ActiveSessions(sllW1), p.ActiveSessions(sllW2), p.ActiveSessions(sllW3)}
}

// TestSLLScenarioS1 is §10 scenario S1 step by step.
func TestSLLScenarioS1(t *testing.T) {
	p := NewStickyLeastLoaded(DefaultSLLOptions(), 0)
	steps := []struct {
		id      string
		want    int
		outcome SLLOutcome
		counts  [3]int
	}{
		{"sess-1", 0, SLLNewSession, [3]int{1, 0, 0}},
		{"sess-2", 2, SLLNewSession, [3]int{1, 0, 1}},
		{"sess-3", 1, SLLNewSession, [3]int{1, 1, 1}},
		{"sess-4", 1, SLLNewSession, [3]int{1, 2, 1}},
		{"sess-1", 0, SLLStickyHit, [3]int{1, 2, 1}},
		{"", 0, SLLStateless, [3]int{1, 2, 1}},
		{"", 2, SLLStateless, [3]int{1, 2, 1}},
		{"", 0, SLLStateless, [3]int{1, 2, 1}},
		{"sess-5", 0, SLLNewSession, [3]int{2, 2, 1}},
	}
	for i, s := range steps {
		got := p.Route(sllWorkers, nil, s.id, time.Duration(i)*time.Second)
		if got.Worker != s.want || got.Outcome != s.outcome {
			t.Fatalf("step %d (%q): got worker %d %v, want %d %v", i+1, s.id, got.Worker, got.Outcome, s.want, s.outcome)
		}
		if c := sllCounts(p); c != s.counts {
			t.Fatalf("step %d: counts %v, want %v", i+1, c, s.counts)
		}
	}
	if p.Cursor() != 3 {
		t.Fatalf("cursor = %d, want 3", p.Cursor())
	}
}

func TestSLLScenarioS2Capacity(t *testing.T) {
	opt := DefaultSLLOptions()
	opt.MaxSessions = 1
	p := NewStickyLeastLoaded(opt, 0)
	want := []struct {
		id      string
		worker  int
		outcome SLLOutcome
	}{
		{"admitted", 1, SLLNewSession},
		{"untracked", 0, SLLCapacityFallback},
		{"untracked", 2, SLLCapacityFallback},
		{"admitted", 1, SLLStickyHit},
	}
	for i, w := range want {
		got := p.Route(sllWorkers, nil, w.id, time.Second)
		if got.Worker != w.worker || got.Outcome != w.outcome {
			t.Fatalf("step %d: got %d %v, want %d %v", i+1, got.Worker, got.Outcome, w.worker, w.outcome)
		}
	}
	if p.Sessions() != 1 {
		t.Fatalf("sessions = %d, want 1", p.Sessions())
	}
}

func TestSLLScenarioS3LongID(t *testing.T) {
	opt := DefaultSLLOptions()
	opt.MaxSessionIDBytes = 8
	p := NewStickyLeastLoaded(opt, 0)
	got := p.Route([]string{sllW1}, nil, "ninebytes", 0)
	if got.Worker != 0 || got.Outcome != SLLStateless || p.Sessions() != 0 {
		t.Fatalf("got %+v with %d sessions", got, p.Sessions())
	}
	if p.FinishSession("ninebytes") {
		t.Fatal("finish_session of an over-long id must do nothing")
	}
}

func TestSLLScenarioS4Health(t *testing.T) {
	p := NewStickyLeastLoaded(DefaultSLLOptions(), 0)
	two := []string{sllW1, sllW2}
	if got := p.Route(two, []bool{true, false}, "s", 0); got.Worker != 0 {
		t.Fatalf("first pick %+v", got)
	}
	got := p.Route(two, []bool{false, true}, "s", time.Second)
	if got.Worker != 1 || got.Outcome != SLLNewSession || !got.Reassigned {
		t.Fatalf("after W1 unhealthy: %+v", got)
	}
	if p.ActiveSessions(sllW1) != 0 || p.ActiveSessions(sllW2) != 1 {
		t.Fatalf("counts W1=%d W2=%d", p.ActiveSessions(sllW1), p.ActiveSessions(sllW2))
	}
	// It stays moved when W1 recovers.
	if got := p.Route(two, nil, "s", 2*time.Second); got.Worker != 1 || got.Outcome != SLLStickyHit {
		t.Fatalf("after recovery: %+v", got)
	}
	// Removing W2 from the list reassigns as well.
	if got := p.Route([]string{sllW1}, nil, "s", 3*time.Second); got.Worker != 0 || !got.Reassigned {
		t.Fatalf("after removal: %+v", got)
	}
}

func TestSLLScenarioS5ExpiryBeforeSweep(t *testing.T) {
	opt := DefaultSLLOptions()
	opt.SessionExpiration = time.Second
	p := NewStickyLeastLoaded(opt, 0)
	now := 10 * time.Second
	p.SetLastSweep(now)
	p.Route([]string{sllW1}, nil, "expired", now)
	p.Route([]string{sllW1}, nil, "active", now)
	p.SetLastAccess("expired", now-2*time.Second)
	two := []string{sllW1, sllW2}
	got := p.Route(two, nil, "expired", now)
	if got.Worker != 1 || !got.Reassigned {
		t.Fatalf("got %+v", got)
	}
	if p.ActiveSessions(sllW1) != 1 || p.ActiveSessions(sllW2) != 1 {
		t.Fatalf("counts W1=%d W2=%d", p.ActiveSessions(sllW1), p.ActiveSessions(sllW2))
	}
}

func TestSLLScenarioS6Sweep(t *testing.T) {
	opt := DefaultSLLOptions()
	opt.SessionExpiration = 0
	p := NewStickyLeastLoaded(opt, 0)
	now := 100 * time.Second
	p.SetLastSweep(now)
	p.Route(sllWorkers, nil, "one", now)
	if p.Sessions() != 1 {
		t.Fatal("session not recorded")
	}
	p.SetLastSweep(now - 61*time.Second)
	p.Route(sllWorkers, nil, "", now)
	if p.Sessions() != 0 || p.ActiveSessions(sllW1)+p.ActiveSessions(sllW2)+p.ActiveSessions(sllW3) != 0 {
		t.Fatalf("sweep left %d sessions", p.Sessions())
	}
}

func TestSLLScenarioS7Finish(t *testing.T) {
	p := NewStickyLeastLoaded(DefaultSLLOptions(), 0)
	p.Route(sllWorkers, nil, "sess-x", 0)
	p.Route(sllWorkers, nil, "sess-y", 0)
	if !p.FinishSession("sess-x") {
		t.Fatal("first finish must release")
	}
	if p.FinishSession("sess-x") {
		t.Fatal("second finish must do nothing")
	}
	if p.Sessions() != 1 {
		t.Fatalf("sessions = %d", p.Sessions())
	}
	if _, ok := p.SessionWorker("sess-y"); !ok {
		t.Fatal("other session disturbed")
	}
}

func TestSLLNoCandidates(t *testing.T) {
	p := NewStickyLeastLoaded(DefaultSLLOptions(), 0)
	if got := p.Route(sllWorkers, []bool{false, false, false}, "s", 0); got.Worker != -1 || got.Outcome != SLLNoWorker {
		t.Fatalf("got %+v", got)
	}
	if p.Sessions() != 0 || p.Cursor() != 0 {
		t.Fatal("state changed without candidates")
	}
}

// TestSLLBalancesNewSessions is the upstream concurrency test's sequential
// form: 60 new sessions over 3 workers give exactly 20 each.
func TestSLLBalancesNewSessions(t *testing.T) {
	p := NewStickyLeastLoaded(DefaultSLLOptions(), 0)
	for i := 0; i < 60; i++ {
		p.Route(sllWorkers, nil, fmt.Sprintf("s-%d", i), 0)
	}
	if c := sllCounts(p); c != [3]int{20, 20, 20} {
		t.Fatalf("counts %v", c)
	}
}

// TestSLLProperties checks invariants on random operation sequences: the
// counts always equal the sessions per worker, a new session never goes to
// a worker with more sessions than another candidate, and a sticky hit
// returns the recorded worker.
func TestSLLProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opt := SLLOptions{
			SessionExpiration: time.Duration(rapid.IntRange(0, 5).Draw(t, "exp")) * time.Second,
			MaxSessions:       rapid.IntRange(0, 6).Draw(t, "max"),
			MaxSessionIDBytes: 4,
		}
		p := NewStickyLeastLoaded(opt, 0)
		now := time.Duration(0)
		ids := []string{"", "a", "b", "c", "d", "e", "toolong"}
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for s := 0; s < steps; s++ {
			now += time.Duration(rapid.IntRange(0, 3000).Draw(t, "dt")) * time.Millisecond
			id := rapid.SampledFrom(ids).Draw(t, "id")
			if rapid.IntRange(0, 9).Draw(t, "finish") == 0 {
				p.FinishSession(id)
				continue
			}
			healthy := []bool{rapid.Bool().Draw(t, "h1"), rapid.Bool().Draw(t, "h2"), true}
			prev, had := p.SessionWorker(id)
			got := p.Route(sllWorkers, healthy, id, now)
			if got.Worker < 0 || !healthy[got.Worker] {
				t.Fatalf("picked %d, not a candidate", got.Worker)
			}
			if got.Outcome == SLLStickyHit && (!had || prev != sllWorkers[got.Worker]) {
				t.Fatalf("sticky hit to %s, recorded %q", sllWorkers[got.Worker], prev)
			}
			if got.Outcome == SLLNewSession {
				// Sweeps happen before the pick, so the counts after the
				// call are the pick's view plus the new session.
				chosen := p.ActiveSessions(sllWorkers[got.Worker]) - 1
				for i, w := range sllWorkers {
					if healthy[i] && p.ActiveSessions(w) < chosen {
						t.Fatalf("new session on %s (load %d) while %s has %d", sllWorkers[got.Worker], chosen, w, p.ActiveSessions(w))
					}
				}
			}
			total := 0
			for _, w := range sllWorkers {
				if p.ActiveSessions(w) < 0 {
					t.Fatal("negative count")
				}
				total += p.ActiveSessions(w)
			}
			if total != p.Sessions() {
				t.Fatalf("counts sum %d, sessions %d", total, p.Sessions())
			}
			if p.Sessions() > opt.MaxSessions {
				t.Fatalf("sessions %d above max %d", p.Sessions(), opt.MaxSessions)
			}
		}
	})
}

func TestSLLSessionID(t *testing.T) {
	cases := []struct {
		name    string
		headers map[string]string
		body    string
		want    string
		ok      bool
	}{
		{"header order", map[string]string{"x-user-id": "u", "x-session-id": "s"}, ``, "s", true},
		{"empty header skipped", map[string]string{"x-session-id": "", "x-tenant-id": "t"}, ``, "t", true},
		{"header case", map[string]string{"X-Correlation-Id": "c"}, ``, "c", true},
		{"header kept raw", map[string]string{"x-session-id": " a "}, ``, " a ", true},
		{"request id not a source", map[string]string{"x-request-id": "r"}, ``, "", false},
		{"headers before body", map[string]string{"x-user-id": "h"}, `{"user":"b"}`, "h", true},
		{"session_params", nil, `{"user":"u","session_params":{"session_id":"sp"}}`, "sp", true},
		{"user", nil, `{"user":"u","session_id":"s"}`, "u", true},
		{"non-string skipped", nil, `{"user":5,"session_id":"s"}`, "s", true},
		{"empty skipped", nil, `{"user":"","user_id":"uid"}`, "uid", true},
		{"escapes", nil, `{"session_id":"session-\"quoted\\path"}`, `session-"quoted\path`, true},
		{"nested ignored", nil, `{"metadata":{"session_id":"m"}}`, "", false},
		{"not json", nil, `{"user":`, "", false},
		{"array", nil, `["user"]`, "", false},
		{"no body", nil, ``, "", false},
	}
	for _, c := range cases {
		got, ok := SLLSessionID(c.headers, []byte(c.body))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %q %v, want %q %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func FuzzSLLSessionID(f *testing.F) {
	f.Add(`{"session_params":{"session_id":"x"}}`)
	f.Add(`{"user":"\u00e9"}`)
	f.Add(`nul`)
	f.Fuzz(func(t *testing.T, body string) {
		id, ok := SLLSessionID(nil, []byte(body))
		if ok && id == "" {
			t.Fatal("ok with an empty id")
		}
	})
}

// TestSLLDoesNotRetainCallerIDs: Route and FinishSession must not keep
// the caller's string (the simulator passes IDs aliasing a reused buffer;
// a map assignment would store the caller's key).
func TestSLLDoesNotRetainCallerIDs(t *testing.T) {
	p := NewStickyLeastLoaded(DefaultSLLOptions(), 0)
	buf := []byte("sess-1")
	// The ID aliases buf, as the simulator's scratch-buffer IDs do.
	id := func() string { return unsafe.String(unsafe.SliceData(buf), len(buf)) }
	first := p.Route(sllWorkers, nil, id(), 0)
	for i := 0; i < 3; i++ { // sticky hits
		if got := p.Route(sllWorkers, nil, id(), time.Second); got.Outcome != SLLStickyHit || got.Worker != first.Worker {
			t.Fatalf("hit %d: %+v", i, got)
		}
	}
	copy(buf, "xxxx-9") // the caller reuses its buffer
	buf2 := []byte("sess-1")
	if w, ok := p.SessionWorker(string(buf2)); !ok || w != sllWorkers[first.Worker] {
		t.Fatalf("session lost after the caller's buffer changed: %q %v", w, ok)
	}
}
