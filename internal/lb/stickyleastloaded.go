package lb

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"time"
)

// This file is a comparison policy for the simulator, not a Stargate
// algorithm: vllm-project/router's sticky_least_loaded session routing
// (pull request 235, revision C of ../shared/spec/sticky-least-loaded.md).
// It balances active sessions per worker, keeps a session on the worker it
// was first given, and sends requests without a session round-robin among
// the least-loaded workers.

// Sticky-least-loaded defaults (sticky-least-loaded.md §6–7).
const (
	// DefaultSLLSessionExpiration is the idle time after which a session
	// is forgotten (VLLM_ROUTER_SLL_SESSION_EXPIRATION_IN_S default, 7200 s).
	DefaultSLLSessionExpiration = 7200 * time.Second
	// DefaultSLLMaxSessions is the session table bound
	// (VLLM_ROUTER_SLL_MAX_SESSIONS default).
	DefaultSLLMaxSessions = 100000
	// DefaultSLLMaxSessionIDBytes is the longest session ID kept, in bytes
	// (VLLM_ROUTER_SLL_MAX_SESSION_ID_BYTES default).
	DefaultSLLMaxSessionIDBytes = 256
	// SLLSweepInterval is the periodic sweep interval (60 s, §6).
	SLLSweepInterval = 60 * time.Second
)

// SLLOptions are the sticky-least-loaded limits, which upstream reads from
// environment variables once at policy creation (§6–7).
type SLLOptions struct {
	// SessionExpiration is the idle expiry; 0 is allowed (every known
	// session is reassigned on every request).
	SessionExpiration time.Duration
	// MaxSessions bounds the session table (sessions); 0 means no session
	// is ever recorded.
	MaxSessions int
	// MaxSessionIDBytes is the longest accepted session ID (bytes); a
	// longer ID is treated as absent.
	MaxSessionIDBytes int
}

// DefaultSLLOptions returns the upstream defaults: 7200 s, 100000
// sessions, 256 bytes.
func DefaultSLLOptions() SLLOptions {
	return SLLOptions{
		SessionExpiration: DefaultSLLSessionExpiration,
		MaxSessions:       DefaultSLLMaxSessions,
		MaxSessionIDBytes: DefaultSLLMaxSessionIDBytes,
	}
}

// SLLOutcome says how a sticky-least-loaded pick was made.
type SLLOutcome uint8

// Sticky-least-loaded outcomes (§4).
const (
	// SLLNoWorker: no healthy candidate; nothing changed.
	SLLNoWorker SLLOutcome = iota
	// SLLStickyHit: a known, unexpired session on a candidate worker.
	SLLStickyHit
	// SLLNewSession: a session assigned with least_loaded_pick and recorded
	// (also after its old assignment was dropped; see SLLPick.Reassigned).
	SLLNewSession
	// SLLStateless: no (usable) session ID; round-robin among the least
	// loaded.
	SLLStateless
	// SLLCapacityFallback: a new session met a full table; routed
	// statelessly and not recorded.
	SLLCapacityFallback
)

var sllOutcomeNames = [...]string{"no_worker", "sticky_hit", "new_session", "stateless", "capacity_fallback"}

// String returns the snake_case outcome name.
func (o SLLOutcome) String() string {
	if int(o) < len(sllOutcomeNames) {
		return sllOutcomeNames[o]
	}
	return "invalid"
}

// SLLPick is the result of one sticky-least-loaded routing call.
type SLLPick struct {
	// Worker is the chosen worker's index in the worker list, -1 for
	// SLLNoWorker.
	Worker int
	// Outcome says which rule chose it.
	Outcome SLLOutcome
	// Reassigned reports that a known session was dropped first because
	// its worker was no longer a candidate or it had expired (§4 step 6).
	Reassigned bool
}

type sllSession struct {
	worker     string
	lastAccess time.Duration
}

// The session table is a map from session ID to a slot of a slice, so a
// sticky hit updates the slot without assigning to the map: Go overwrites
// a string key on assignment, and Route must not retain the caller's
// string (the simulator passes IDs that alias a reused buffer).

// StickyLeastLoaded is the policy state of one router process (§1):
// sessions, active counts per worker URL, the stateless cursor and the
// last sweep time. Times are readings of an injected monotonic clock
// (durations since an arbitrary origin). Not safe for concurrent use; the
// upstream mutex is the caller's business.
type StickyLeastLoaded struct {
	opt       SLLOptions
	sessions  map[string]int32
	slots     []sllSession
	free      []int32
	active    map[string]int
	cursor    uint64
	lastSweep time.Duration

	cand []int
	tied []int
	buf  []byte
}

// NewStickyLeastLoaded returns an empty policy created at clock reading
// now (the first periodic sweep is due at now + 60 s). Negative limits are
// treated as 0.
func NewStickyLeastLoaded(opt SLLOptions, now time.Duration) *StickyLeastLoaded {
	opt.SessionExpiration = max(opt.SessionExpiration, 0)
	opt.MaxSessions = max(opt.MaxSessions, 0)
	opt.MaxSessionIDBytes = max(opt.MaxSessionIDBytes, 0)
	return &StickyLeastLoaded{
		opt:       opt,
		sessions:  make(map[string]int32),
		active:    make(map[string]int),
		lastSweep: now,
	}
}

// Options returns the policy's limits.
func (p *StickyLeastLoaded) Options() SLLOptions { return p.opt }

// Sessions returns the number of recorded sessions (expired ones not yet
// swept included).
func (p *StickyLeastLoaded) Sessions() int { return len(p.sessions) }

// ActiveSessions returns active_counts[url]: the sessions assigned to the
// worker (0 when absent).
func (p *StickyLeastLoaded) ActiveSessions(url string) int { return p.active[url] }

// Cursor returns the stateless round-robin cursor.
func (p *StickyLeastLoaded) Cursor() uint64 { return p.cursor }

// SessionWorker returns the worker URL a session is assigned to.
func (p *StickyLeastLoaded) SessionWorker(id string) (string, bool) {
	i, ok := p.sessions[id]
	if !ok {
		return "", false
	}
	return p.slots[i].worker, true
}

// SetLastAccess overwrites a recorded session's last access time (a test
// hook reproducing the upstream tests that age an entry); it reports
// whether the session exists.
func (p *StickyLeastLoaded) SetLastAccess(id string, at time.Duration) bool {
	i, ok := p.sessions[id]
	if ok {
		p.slots[i].lastAccess = at
	}
	return ok
}

// SetLastSweep overwrites the last sweep time (test hook, §10 S6).
func (p *StickyLeastLoaded) SetLastSweep(at time.Duration) { p.lastSweep = at }

// Reset clears sessions, counts and the cursor and sets the last sweep to
// now (§9 reset()).
func (p *StickyLeastLoaded) Reset(now time.Duration) {
	clear(p.sessions)
	p.slots, p.free = p.slots[:0], p.free[:0]
	clear(p.active)
	p.cursor = 0
	p.lastSweep = now
}

// FinishSession releases a session (§9 finish_session): it deletes id and
// decrements its worker's count; unknown IDs are ignored. It reports
// whether a session was released. Expiry is not consulted.
func (p *StickyLeastLoaded) FinishSession(id string) bool {
	i, ok := p.sessions[id]
	if !ok {
		return false
	}
	p.drop(id, i)
	return true
}

// drop deletes session id (slot i) and releases its worker.
func (p *StickyLeastLoaded) drop(id string, i int32) {
	delete(p.sessions, id)
	p.release(p.slots[i].worker)
	p.slots[i] = sllSession{}
	p.free = append(p.free, i)
}

func (p *StickyLeastLoaded) release(url string) {
	if n := p.active[url]; n <= 1 {
		delete(p.active, url)
	} else {
		p.active[url] = n - 1
	}
}

// Sweep deletes every expired session (idle ≥ expiration) and sets the
// last sweep time to now (§6 full sweep).
func (p *StickyLeastLoaded) Sweep(now time.Duration) {
	for id, i := range p.sessions {
		if now-p.slots[i].lastAccess >= p.opt.SessionExpiration {
			p.drop(id, i)
		}
	}
	p.lastSweep = now
}

// Route picks a worker for one request (§4). workers are the worker URLs
// in list order; healthy, when non-nil, marks the candidates (health and
// circuit breaker, §3) and must be as long as workers; nil means all are
// candidates. sessionID is the extracted session ID ("" = none; see
// SLLSessionID); now is the monotonic clock reading. The returned index
// is a position in workers. Route does not retain sessionID (it copies an
// ID it records).
func (p *StickyLeastLoaded) Route(workers []string, healthy []bool, sessionID string, now time.Duration) SLLPick {
	cand := p.cand[:0]
	for i := range workers {
		if healthy == nil || (i < len(healthy) && healthy[i]) {
			cand = append(cand, i)
		}
	}
	p.cand = cand
	if len(cand) == 0 {
		return SLLPick{Worker: -1, Outcome: SLLNoWorker}
	}
	hasID := sessionID != "" && len(sessionID) <= p.opt.MaxSessionIDBytes
	if now-p.lastSweep >= SLLSweepInterval {
		p.Sweep(now)
	}
	if !hasID {
		return SLLPick{Worker: p.statelessPick(workers), Outcome: SLLStateless}
	}
	var pick SLLPick
	if si, ok := p.sessions[sessionID]; ok {
		s := &p.slots[si]
		if now-s.lastAccess < p.opt.SessionExpiration {
			for _, i := range cand {
				if workers[i] == s.worker {
					s.lastAccess = now
					return SLLPick{Worker: i, Outcome: SLLStickyHit}
				}
			}
		}
		p.drop(sessionID, si)
		pick.Reassigned = true
	}
	if len(p.sessions) >= p.opt.MaxSessions {
		p.Sweep(now)
		if len(p.sessions) >= p.opt.MaxSessions {
			pick.Worker, pick.Outcome = p.statelessPick(workers), SLLCapacityFallback
			return pick
		}
	}
	w := p.leastLoadedPick(workers, sessionID)
	var si int32
	if n := len(p.free); n > 0 {
		si = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		p.slots = append(p.slots, sllSession{})
		si = int32(len(p.slots) - 1)
	}
	p.slots[si] = sllSession{worker: workers[w], lastAccess: now}
	p.sessions[strings.Clone(sessionID)] = si
	p.active[workers[w]]++
	pick.Worker, pick.Outcome = w, SLLNewSession
	return pick
}

// minTied fills p.tied with the candidates holding the fewest sessions, in
// list order.
func (p *StickyLeastLoaded) minTied(workers []string) []int {
	least := -1
	tied := p.tied[:0]
	for _, i := range p.cand {
		n := p.active[workers[i]]
		switch {
		case least < 0 || n < least:
			least = n
			tied = append(tied[:0], i)
		case n == least:
			tied = append(tied, i)
		}
	}
	p.tied = tied
	return tied
}

// leastLoadedPick is §5.1: rendezvous hashing fbi_hash(key + ":" + url)
// over the least-loaded candidates; the highest weight wins, the earlier
// candidate on equal weights.
func (p *StickyLeastLoaded) leastLoadedPick(workers []string, key string) int {
	tied := p.minTied(workers)
	best, bestW := -1, uint64(0)
	for _, i := range tied {
		b := append(p.buf[:0], key...)
		b = append(b, ':')
		b = append(b, workers[i]...)
		p.buf = b
		w := fbiHashBytes(b)
		if best < 0 || w > bestW {
			best, bestW = i, w
		}
	}
	return best
}

// statelessPick is §5.2: tied[cursor mod len(tied)], then the cursor
// advances (wrapping).
func (p *StickyLeastLoaded) statelessPick(workers []string) int {
	tied := p.minTied(workers)
	w := tied[p.cursor%uint64(len(tied))]
	p.cursor++
	return w
}

// sllSessionHeaders are the stable session headers in precedence order
// (§2 item 1).
var sllSessionHeaders = [...]string{"x-session-id", "x-user-id", "x-tenant-id", "x-correlation-id"}

// SLLSessionID extracts the session ID of §2: the first of x-session-id,
// x-user-id, x-tenant-id, x-correlation-id present with a non-empty value
// (names matched case-insensitively, values exactly as received), else,
// when the body is a JSON object, the first non-empty string among
// session_params.session_id, user, session_id and user_id. It does not
// apply the byte limit (Route does). ok is false when there is no session.
func SLLSessionID(headers map[string]string, body []byte) (id string, ok bool) {
	for _, want := range sllSessionHeaders {
		if v := headers[want]; v != "" {
			return v, true
		}
		// Names in another case: the smallest such name, for determinism
		// (HTTP stacks hand the policy lower-case names, so this is rare).
		best, found := "", false
		for name, v := range headers {
			if v != "" && strings.EqualFold(name, want) && (!found || name < best) {
				best, found = name, true
			}
		}
		if found {
			return headers[best], true
		}
	}
	if len(body) == 0 {
		return "", false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return "", false
	}
	if raw, ok := top["session_params"]; ok {
		var sp map[string]json.RawMessage
		if json.Unmarshal(raw, &sp) == nil {
			if s, ok := jsonNonEmptyString(sp["session_id"]); ok {
				return s, true
			}
		}
	}
	for _, f := range [...]string{"user", "session_id", "user_id"} {
		if s, ok := jsonNonEmptyString(top[f]); ok {
			return s, true
		}
	}
	return "", false
}

func jsonNonEmptyString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return "", false
	}
	return s, true
}

// fbi_hash constants (§5.3).
const (
	fbiM    = 0xc6a4a7935bd1e995
	fbiR    = 47
	fbiSeed = 4193360111
	// fbiFurcRange is the furc range m = 2^23 − 1 used by fbi_hash.
	fbiFurcRange = 1<<23 - 1
)

// Murmur64A is MurmurHash64A of b with seed, as sticky-least-loaded.md
// §5.3 defines it (all arithmetic wrapping uint64).
func Murmur64A(b []byte, seed uint64) uint64 {
	h := seed ^ (uint64(len(b)) * fbiM)
	for len(b) >= 8 {
		k := binary.LittleEndian.Uint64(b)
		k *= fbiM
		k ^= k >> fbiR
		k *= fbiM
		h ^= k
		h *= fbiM
		b = b[8:]
	}
	if len(b) > 0 {
		for i := len(b) - 1; i >= 0; i-- {
			h ^= uint64(b[i]) << (8 * uint(i))
		}
		h *= fbiM
	}
	h ^= h >> fbiR
	h *= fbiM
	h ^= h >> fbiR
	return h
}

// fbiRehash is rehash(k) of §5.3: Murmur64A of k's 8 little-endian bytes.
func fbiRehash(k uint64) uint64 {
	m := uint64(fbiM)
	h := uint64(fbiSeed) ^ (8 * m)
	k *= fbiM
	k ^= k >> fbiR
	k *= fbiM
	h ^= k
	h *= fbiM
	h ^= h >> fbiR
	h *= fbiM
	h ^= h >> fbiR
	return h
}

// furcBits is the lazily extended bit stream of a key (§5.3). 32 tries of
// at most 23·24 bits each stay below 272 blocks.
type furcBits struct {
	blocks [272]uint64
	n      int
}

func (f *furcBits) bit(i int) uint64 {
	blk := i >> 6
	if blk >= len(f.blocks) {
		return 0 // unreachable for m ≤ 2^32 (see furcBits)
	}
	for f.n <= blk {
		f.blocks[f.n] = fbiRehash(f.blocks[f.n-1])
		f.n++
	}
	return (f.blocks[blk] >> uint(i&63)) & 1
}

// Furc is furc(key, m) of §5.3 (the Rust order: d = 0 is checked before
// decrementing): a value in [0, m), 0 when m ≤ 1.
func Furc(key []byte, m uint32) uint32 {
	if m <= 1 {
		return 0
	}
	var f furcBits
	f.blocks[0] = Murmur64A(key, fbiSeed)
	f.n = 1
	d := 0
	for uint64(1)<<uint(d) < uint64(m) {
		d++
	}
	a := d
	for try := 0; try < 32; try++ {
		for f.bit(a) == 0 {
			if d == 0 {
				return 0
			}
			d--
			a = d
		}
		a += 23
		num := uint64(1)
		for j := 0; j < d-1; j++ {
			num = num<<1 | f.bit(a)
			a += 23
		}
		if num < uint64(m) {
			return uint32(num)
		}
	}
	return 0
}

// FBIHash is fbi_hash(s) of §5.3: Murmur64A of the 4 little-endian bytes of
// furc(s, 2^23 − 1), seeded with 4193360111.
func FBIHash(s string) uint64 { return fbiHashBytes([]byte(s)) }

func fbiHashBytes(b []byte) uint64 {
	var v [4]byte
	binary.LittleEndian.PutUint32(v[:], Furc(b, fbiFurcRange))
	return Murmur64A(v[:], fbiSeed)
}
