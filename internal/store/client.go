package store

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/olric-data/olric"
	"github.com/olric-data/olric/config"
	"github.com/redis/go-redis/v9"
)

// Defaults for Options.
const (
	// DefaultDialTimeout bounds one TCP (and TLS) connection attempt.
	DefaultDialTimeout = 2 * time.Second
	// DefaultRequestTimeout bounds one Olric call (one round trip, or one
	// pipeline). It is shorter than the olric client's 3 s read timeout,
	// as olric.md §10 advises.
	DefaultRequestTimeout = 2 * time.Second
	// DefaultAttempts is how often a call that failed for a transient
	// reason (member gone or shutting down, connection refused or reset,
	// timeout) is tried in total, refreshing the routing table in between;
	// the waits between tries add up to about 1.5 s, the time a member
	// takes to leave.
	DefaultAttempts = 6
	// routingRefresh is how often the olric client refreshes its routing
	// table in the background (olric's default is one minute).
	routingRefresh = 5 * time.Second
)

// Error kinds. Errors returned by Client methods wrap one of these (test
// with errors.Is) together with the underlying olric or network error.
var (
	// ErrNotFound means the key is absent or expired (olric ErrKeyNotFound).
	ErrNotFound = errors.New("not found")
	// ErrUnreachable means a member could not be dialled or dropped the
	// connection (refused, reset, no route, DNS failure, closed client).
	ErrUnreachable = errors.New("unreachable")
	// ErrTimeout means a dial, a request or an Olric operation timed out.
	ErrTimeout = errors.New("timed out")
	// ErrAuth means the server refused the password, wants one that was not
	// given, or was given one it does not expect (olric.md §3.4).
	ErrAuth = errors.New("authentication failed")
	// ErrIncomplete means a scan could not read every partition or entry;
	// the returned report says how far it got.
	ErrIncomplete = errors.New("incomplete")
)

// Options configure Connect. Only Addrs is required.
type Options struct {
	// Addrs are seed members, "host:port" of Olric's RESP port (3320 in the
	// gateway chart). Any one reachable member is enough to discover the
	// others; after that the client dials every member by its name
	// ("<pod IP>:3320"), so every member must be reachable (olric.md §3.1).
	Addrs []string
	// DMap is the DMap to use; empty means DMapName.
	DMap string
	// DialTimeout bounds one connection attempt; 0 means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// RequestTimeout bounds one Olric call; 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Attempts is how many times a call that failed transiently is tried;
	// 0 means DefaultAttempts, 1 disables retries.
	Attempts int
	// Password, when not empty, makes the client send AUTH on every new
	// connection. The gateway's Olric has no password, and AUTH against a
	// server without one fails (olric.md §3.4): leave it empty there.
	Password string
	// TLS, when not nil, wraps every connection in TLS. Olric v0.7.x has no
	// server-side TLS; this is for a TLS-terminating proxy in front of it
	// (olric.md §3.5).
	TLS *tls.Config
	// AddrMap translates member addresses before dialling: a member named
	// "10.1.2.3:3320" is dialled at AddrMap["10.1.2.3:3320"] when present.
	// It makes one `kubectl port-forward` per gateway pod usable.
	AddrMap map[string]string
	// Log receives the olric client's own log lines (routing-table refresh
	// failures and the like); nil discards them.
	Log io.Writer
}

func (o *Options) withDefaults() (Options, error) {
	out := *o
	if len(out.Addrs) == 0 {
		return out, errors.New("no Olric address given: use --olric host:port[,host:port] or LCCTL_OLRIC_ADDRS")
	}
	for i, a := range out.Addrs {
		if err := validateAddr(a); err != nil {
			return out, fmt.Errorf("olric address %d: %w", i+1, err)
		}
	}
	for from, to := range out.AddrMap {
		if err := validateAddr(from); err != nil {
			return out, fmt.Errorf("address map: %w", err)
		}
		if err := validateAddr(to); err != nil {
			return out, fmt.Errorf("address map for %s: %w", from, err)
		}
	}
	if out.DMap == "" {
		out.DMap = DMapName
	}
	if err := ValidateDMapName(out.DMap); err != nil {
		return out, err
	}
	if out.DialTimeout == 0 {
		out.DialTimeout = DefaultDialTimeout
	}
	if out.RequestTimeout == 0 {
		out.RequestTimeout = DefaultRequestTimeout
	}
	if out.DialTimeout < time.Millisecond || out.RequestTimeout < time.Millisecond {
		return out, fmt.Errorf("dial timeout %v and request timeout %v must be at least 1ms", out.DialTimeout, out.RequestTimeout)
	}
	if out.Attempts == 0 {
		out.Attempts = DefaultAttempts
	}
	if out.Attempts < 1 || out.Attempts > 100 {
		return out, fmt.Errorf("attempts %d out of range 1-100", out.Attempts)
	}
	if strings.TrimSpace(out.Password) != out.Password {
		return out, errors.New("password has leading or trailing whitespace: Olric trims passwords, so it would not match")
	}
	return out, nil
}

// Client is a connection to one Olric cluster and one DMap. It is safe for
// concurrent use; Scan, Evict and Stats run one at a time.
type Client struct {
	opts Options
	cc   *olric.ClusterClient
	dm   olric.DMap
	logs *logSink

	scanMu sync.Mutex // one iterator at a time (its errors arrive through logs)

	// abandoned is set when a run found the cluster down and left calls
	// in flight (see cutCall): Close then does not wait for them.
	abandoned atomic.Bool

	pings pingsOut // liveness pings still out (see pingAny)

	mu          sync.Mutex // protects the fields below
	route       olric.RoutingTable
	partitions  uint64
	lastRefresh time.Time
}

// Connect validates opts, dials the seeds in order until one answers
// CLUSTER.MEMBERS and CLUSTER.ROUTINGTABLE (through olric's
// NewClusterClient), and opens the DMap. No DMap command is sent. The error
// wraps ErrUnreachable, ErrTimeout or ErrAuth and lists every seed tried,
// and every member reached through AddrMap that did not answer in time
// ("no reply from member M (dialled at A)").
func Connect(ctx context.Context, opts Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	sink := &logSink{out: o.Log}
	type seedErr struct {
		seed string
		kind error
		err  error
	}
	var failed []seedErr
	var firstKind error
	silent := &silentMembers{}
	for _, seed := range o.Addrs {
		cc, err := newClusterClient(ctx, seed, &o, sink, silent)
		if err == nil {
			c := &Client{opts: o, cc: cc, logs: sink}
			dm, err := cc.NewDMap(o.DMap)
			if err != nil {
				_ = cc.Close(context.Background())
				return nil, fmt.Errorf("open dmap %q: %w", o.DMap, err)
			}
			c.dm = dm
			if err := c.refreshRoutes(ctx, false); err != nil {
				_ = cc.Close(context.Background())
				return nil, fmt.Errorf("%w%s%s", err, silent.describe(), silent.unnamed(err))
			}
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect: %w", ctx.Err())
		}
		kind := kindOf(err)
		if firstKind == nil {
			firstKind = kind
		}
		failed = append(failed, seedErr{seed, kind, err})
	}
	if firstKind == nil {
		firstKind = ErrUnreachable
	}
	// Each seed's error already starts with its kind ("unreachable: …",
	// from classify); the message names firstKind once, so a seed of that
	// kind shows only its detail, and a seed of another kind keeps its own.
	errs := make([]string, len(failed))
	for i, f := range failed {
		msg := f.err.Error()
		if f.kind != nil {
			msg = strings.TrimPrefix(msg, f.kind.Error()+": ")
			if f.kind != firstKind {
				msg = f.kind.Error() + ": " + msg
			}
		}
		// The dial error names the seed again ("dial tcp 127.0.0.1:1:
		// connection refused"): the message starts with it already.
		for _, nw := range []string{"tcp", "tcp4", "tcp6"} {
			msg = strings.ReplaceAll(msg, "dial "+nw+" "+f.seed+": ", "dial "+nw+": ")
		}
		errs[i] = f.seed + ": " + msg
	}
	hint := ""
	allRouting := len(failed) > 0
	for _, f := range failed {
		allRouting = allRouting && routingTimeout(f.err)
	}
	switch {
	case allRouting:
		// Every seed failed reading the routing table, which olric's
		// client asks of any member it knows: name the member that did
		// not answer, or say that one did not.
		if hint = silent.describe(); hint == "" {
			hint = silent.unnamed(failed[0].err)
		}
	case errors.Is(firstKind, ErrUnreachable) || errors.Is(firstKind, ErrTimeout):
		hint = " (is the address right, and does this machine reach the gateway pods? see 'lcctl docs store', \"Where to run lcctl\")"
	}
	if !allRouting {
		hint = silent.describe() + hint
	}
	return nil, fmt.Errorf("cannot connect to Olric: %w: %s%s", firstKind, strings.Join(errs, "; "), hint)
}

// newClusterClient runs olric.NewClusterClient for one seed, honouring ctx
// (the olric constructor takes none: it is abandoned, and closed when it
// finishes, if ctx ends first).
func newClusterClient(ctx context.Context, seed string, o *Options, sink *logSink, silent *silentMembers) (*olric.ClusterClient, error) {
	cfg := &config.Client{
		DialTimeout:    o.DialTimeout,
		ReadTimeout:    o.RequestTimeout,
		WriteTimeout:   o.RequestTimeout,
		MaxRetries:     1, // one quiet retry for a stale pooled connection; ours do the rest
		Authentication: &config.Authentication{Password: o.Password},
		Dialer:         newDialer(o, silent),
		Limiter:        iterRefreshGuard{},
	}
	type result struct {
		cc  *olric.ClusterClient
		err error
	}
	ch := make(chan result, 1)
	go func() {
		cc, err := safeNewClusterClient(seed, cfg, sink)
		ch <- result{cc, err}
	}()
	select {
	case r := <-ch:
		return r.cc, classify(r.err)
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.cc != nil {
				_ = r.cc.Close(context.Background())
			}
		}()
		return nil, ctx.Err()
	}
}

// safeNewClusterClient turns a panic inside the olric constructor (it
// type-asserts server replies) into an error: a seed that is not an Olric
// member must not crash lcctl.
func safeNewClusterClient(seed string, cfg *config.Client, sink *logSink) (cc *olric.ClusterClient, err error) {
	defer func() {
		if r := recover(); r != nil {
			cc, err = nil, fmt.Errorf("unexpected reply (is %s an Olric member?): %v", seed, r)
		}
	}()
	return olric.NewClusterClient([]string{seed},
		olric.WithConfig(cfg),
		olric.WithLogger(log.New(sink, "", 0)),
		olric.WithRoutingTableFetchInterval(routingRefresh),
	)
}

// newDialer returns the dialer every connection uses: TCP with the dial
// timeout and keep-alive, address translation through AddrMap, and TLS
// when configured. Dial errors are returned unwrapped (*net.OpError), as
// the olric client's error translation expects.
//
// A member that times out (in the dial or in a read or write) is noted in
// silent, with where it was dialled when it is reached through AddrMap, so
// an error can name the member that did not answer instead of only the
// seed that did (a frozen or partitioned member, not yet dropped by the
// cluster, times out every call routed to it, the routing table's
// included).
func newDialer(o *Options, silent *silentMembers) func(ctx context.Context, network, addr string) (net.Conn, error) {
	nd := &net.Dialer{Timeout: o.DialTimeout, KeepAlive: 5 * time.Minute}
	addrMap := o.AddrMap
	tlsCfg := o.TLS
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		member := addr
		to, mapped := addrMap[addr]
		if mapped {
			addr = to
		}
		var c net.Conn
		var err error
		if tlsCfg == nil {
			c, err = nd.DialContext(ctx, network, addr)
		} else {
			td := &tls.Dialer{NetDialer: nd, Config: tlsCfg}
			c, err = td.DialContext(ctx, network, addr)
		}
		if silent == nil {
			return c, err
		}
		dialled := ""
		if mapped {
			dialled = addr
		}
		if err != nil {
			silent.noteErr(member, dialled, err)
			return c, err
		}
		return &watchedConn{Conn: c, member: member, dialled: dialled, silent: silent}, nil
	}
}

// silentMembers records the members that timed out, as "member M" or
// "member M (dialled at A)" for a mapped one, in the order first seen.
type silentMembers struct {
	mu    sync.Mutex
	names []string
}

func (s *silentMembers) noteErr(member, dialled string, err error) {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		return
	}
	name := "member " + member
	if dialled != "" {
		name += " (dialled at " + dialled + ")"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.names {
		if n == name {
			return
		}
	}
	s.names = append(s.names, name)
}

// describe returns "; no reply from member M (dialled at A)" for the
// members noted, or "" when none timed out.
func (s *silentMembers) describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.names) == 0 {
		return ""
	}
	return "; no reply from " + strings.Join(s.names, ", ") + silentWhy
}

// silentWhy follows the members that did not answer, or stands for them
// when the timed-out call's member is not known.
const silentWhy = " (a frozen or partitioned member: the cluster keeps routing to it until its failure detection declares it dead, after memberlist's probe and suspicion time; then this works again)"

// routingTimeout reports whether err is a timed-out read of the routing
// table, the call every connect makes first.
func routingTimeout(err error) bool {
	return errors.Is(classify(err), ErrTimeout) && strings.Contains(err.Error(), "routing table")
}

// unnamed returns, for a routing-table read that timed out while no
// member was noted as silent, the sentence that says a member did not
// answer; "" otherwise.
func (s *silentMembers) unnamed(err error) string {
	s.mu.Lock()
	n := len(s.names)
	s.mu.Unlock()
	if n > 0 || !routingTimeout(err) {
		return ""
	}
	return "; a member did not answer while the routing table was loaded" + silentWhy
}

// watchedConn notes a timed-out read or write in silentMembers.
type watchedConn struct {
	net.Conn
	member, dialled string
	silent          *silentMembers
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.silent.noteErr(c.member, c.dialled, err)
	}
	return n, err
}

func (c *watchedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		c.silent.noteErr(c.member, c.dialled, err)
	}
	return n, err
}

// DMap returns the name of the DMap the client uses.
func (c *Client) DMap() string { return c.opts.DMap }

// Close stops the olric client's background refresher and closes every
// connection, waiting at most 5 s; after a run found the cluster down it
// waits at most 250 ms (the calls it abandoned hold connections until
// their RequestTimeout, retries included, and olric's Close waits for
// them) and leaves the rest to finish on its own.
func (c *Client) Close() error {
	wait := 5 * time.Second
	if c.abandoned.Load() {
		wait = 250 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.cc.Close(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return nil // still closing: the calls in flight end within their timeouts
	}
}

// PartitionCount returns the cluster's partition count (the routing table
// length seen at Connect).
func (c *Client) PartitionCount() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.partitions
}

// refreshRoutes fetches the routing table (and, with metadata, makes the
// olric client refresh its member list and its own routing table). Calls
// within 100 ms of the last refresh are skipped, so many failing workers
// cause one refresh.
func (c *Client) refreshRoutes(ctx context.Context, metadata bool) error {
	c.mu.Lock()
	if metadata && time.Since(c.lastRefresh) < 100*time.Millisecond {
		c.mu.Unlock()
		return nil
	}
	c.lastRefresh = time.Now()
	c.mu.Unlock()

	rctx, cancel := c.callCtx(ctx)
	defer cancel()
	if metadata {
		if err := c.refreshMembers(rctx); err != nil {
			return err
		}
	}
	rt, err := c.readTable(rctx)
	if err != nil {
		return fmt.Errorf("read routing table: %w", err)
	}
	c.mu.Lock()
	c.route = rt
	if c.partitions == 0 {
		c.partitions = uint64(len(rt))
	}
	c.mu.Unlock()
	return nil
}

// refreshMembers makes the olric client refresh its member list and
// close its connections to members no longer listed (RefreshMetadata),
// within ctx (bound it with callCtx). Olric's RoutingTable and Members
// ask the client's known addresses in turn, and a member that has left
// stays among them (every ping of it adds it back), so a read asked of it
// is refused until this runs. RefreshMetadata itself
// retries CLUSTER.MEMBERS for as long as members refuse connections; the
// members are asked once first (a few tries, in turn: one that has just
// left refuses) so a cluster that is entirely down fails fast instead. The
// error is classified.
func (c *Client) refreshMembers(ctx context.Context) error {
	var err error
	for i := 0; i < 4; i++ {
		if _, err = cutCall(ctx, func() ([]olric.Member, error) { return c.cc.Members(ctx) }); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("refresh members: %w", classify(err))
	}
	if _, err := cutCall(ctx, func() (struct{}, error) { return struct{}{}, c.cc.RefreshMetadata(ctx) }); err != nil {
		return fmt.Errorf("refresh metadata: %w", classify(err))
	}
	return nil
}

// safeCall runs fn and turns a panic (olric's reply parsing type-asserts
// what the server sent) into an error.
func safeCall[T any](fn func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unexpected reply from Olric: %v", r)
		}
	}()
	return fn()
}

// do runs op with a per-attempt RequestTimeout and retries it, after
// refreshing the routing table, while it fails transiently (see
// retryable), up to Options.Attempts tries in total. Within a Scan or
// Evict (ctx carries the run's downWatch) a failure to reach a member
// first makes sure some member still answers, and once the run found the
// cluster down every call fails at once with that error (see down.go).
func (c *Client) do(ctx context.Context, op func(ctx context.Context) error) error {
	var err error
	w := downWatchFrom(ctx)
	for attempt := 1; ; attempt++ {
		if derr := w.downErr(); derr != nil {
			return derr
		}
		actx, cancel := c.callCtx(ctx)
		_, err = cutCall(actx, func() (struct{}, error) { return struct{}{}, op(actx) })
		cancel()
		err = classify(err)
		if derr := w.downErr(); err != nil && derr != nil {
			return derr // cut off when the run found the cluster down
		}
		if err == nil || !retryable(err) || attempt >= c.opts.Attempts || ctx.Err() != nil {
			return err
		}
		if derr := w.check(ctx, err); derr != nil {
			return derr
		}
		if !sleepCtx(ctx, backoff(attempt)) {
			return err
		}
		_ = c.refreshRoutes(ctx, true)
	}
}

func backoff(attempt int) time.Duration {
	d := 50 * time.Millisecond << (attempt - 1)
	if d > time.Second {
		d = time.Second
	}
	return d
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// olricErrorTexts maps the text of Olric's server errors to olric's
// sentinel errors. olric v0.7.4 translates an error reply's prefix
// ("KEYNOTFOUND", ...) into its sentinel only when the prefixes were
// registered, which happens when a member is created in the same process
// (dmap.NewService, routingtable.New, olric.New). In a client-only process
// such as lcctl the reply becomes a plain error holding the text after the
// prefix, e.g. "key not found"; this table restores the sentinel.
var olricErrorTexts = map[string]error{
	"key not found":                                 olric.ErrKeyNotFound,
	"dmap not found":                                olric.ErrKeyNotFound,
	"key found":                                     olric.ErrKeyFound,
	"read quorum cannot be reached":                 olric.ErrReadQuorum,
	"write quorum cannot be reached":                olric.ErrWriteQuorum,
	"server is gone":                                olric.ErrServerGone,
	"operation timeout":                             olric.ErrOperationTimeout,
	"cannot be reached cluster quorum to operate":   olric.ErrClusterQuorum,
	"key too large":                                 olric.ErrKeyTooLarge,
	"entry too large for the configured table size": olric.ErrEntryTooLarge,
	"wrong password":                                olric.ErrWrongPass,
}

// classify restores olric's sentinel for a plain Olric error text (see
// olricErrorTexts) and wraps err with one of the package's error kinds
// (ErrNotFound, ErrUnreachable, ErrTimeout, ErrAuth) when one applies. It
// returns nil for nil.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := olricErrorTexts[err.Error()]; ok && !errors.Is(err, s) {
		err = s
	}
	if k := kindOf(err); k != nil {
		if errors.Is(err, k) {
			return err
		}
		return fmt.Errorf("%w: %w", k, err)
	}
	return err
}

// kindOf returns the package error kind err belongs to, or nil.
func kindOf(err error) error {
	var netErr net.Error
	var dnsErr *net.DNSError
	msg := err.Error()
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrUnreachable), errors.Is(err, ErrTimeout), errors.Is(err, ErrAuth):
		for _, k := range []error{ErrNotFound, ErrUnreachable, ErrTimeout, ErrAuth} {
			if errors.Is(err, k) {
				return k
			}
		}
	case errors.Is(err, olric.ErrKeyNotFound):
		return ErrNotFound
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, olric.ErrOperationTimeout):
		return ErrTimeout
	case errors.As(err, &netErr) && netErr.Timeout():
		return ErrTimeout
	case errors.Is(err, olric.ErrWrongPass), strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "Authentication required"),
		strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "called without any password configured"):
		return ErrAuth
	case errors.Is(err, context.Canceled):
		return nil
	}
	if k := kindOfText(msg); k != nil {
		return k
	}
	switch {
	case errors.Is(err, olric.ErrConnRefused), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, redis.ErrClosed), errors.Is(err, olric.ErrServerGone),
		errors.As(err, &dnsErr):
		return ErrUnreachable
	}
	return nil
}

// kindOfText classifies errors that reached us as plain text. olric's
// error translation (protocol.ConvertError) turns every error reply or
// client error whose first word is not a registered prefix into a plain
// error of the remaining words: "context deadline exceeded" becomes
// "deadline exceeded", "read tcp ...: i/o timeout" becomes "tcp ...: i/o
// timeout" (or just "timeout" from "i/o timeout"), and a member that is
// shutting down answers "ERR context canceled", which arrives as
// "canceled".
func kindOfText(msg string) error {
	switch {
	case msg == "canceled", strings.HasSuffix(msg, "context canceled"):
		// Our own cancellations are caught before, by errors.Is; this is
		// a member cancelling its work while it leaves the cluster.
		return ErrUnreachable
	case strings.Contains(msg, "deadline exceeded"), strings.Contains(msg, "i/o timeout"),
		msg == "timeout", strings.HasSuffix(msg, ": timeout"):
		return ErrTimeout
	}
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "no route to host",
		"network is unreachable", "client is closed", "use of closed network connection"} {
		if strings.Contains(msg, s) {
			return ErrUnreachable
		}
	}
	if msg == "EOF" || strings.HasSuffix(msg, ": EOF") {
		return ErrUnreachable
	}
	return nil
}

// retryable reports whether a failed call may succeed after a routing
// table refresh: members gone or unreachable, timeouts, quorum errors while
// partitions move, and routing-table gaps. Not-found, auth and argument
// errors are final.
func retryable(err error) bool {
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrAuth), errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, ErrUnreachable), errors.Is(err, ErrTimeout),
		errors.Is(err, olric.ErrReadQuorum), errors.Is(err, olric.ErrWriteQuorum),
		errors.Is(err, olric.ErrClusterQuorum):
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "routing table") || strings.Contains(msg, "primary owners list")
}

// Location is where a key lives in the cluster, from the routing table.
type Location struct {
	// Partition is the key's partition (see Partition); Partitions the
	// cluster's partition count.
	Partition  uint64 `json:"partition"`
	Partitions uint64 `json:"partitions"`
	// Owner is the partition's current primary owner (member name), the
	// member the olric client sends the key's Get and Put to.
	Owner string `json:"owner"`
	// PreviousOwners still hold data while a partition moves.
	PreviousOwners []string `json:"previous_owners,omitempty"`
	// Replicas are the backup owners (ReplicaCount - 1 of them at most).
	Replicas []string `json:"replicas,omitempty"`
}

// Locate returns the partition and owners of key from the routing table
// the client last fetched. It makes no network call.
func (c *Client) Locate(key string) Location {
	c.mu.Lock()
	defer c.mu.Unlock()
	loc := Location{Partitions: c.partitions, Partition: Partition(c.opts.DMap, key, c.partitions)}
	r := c.route[loc.Partition]
	if n := len(r.PrimaryOwners); n > 0 {
		loc.Owner = r.PrimaryOwners[n-1]
		loc.PreviousOwners = append([]string(nil), r.PrimaryOwners[:n-1]...)
	}
	loc.Replicas = append([]string(nil), r.ReplicaOwners...)
	return loc
}

// logSink receives the olric client's log lines. It records the latest
// iterator failure ("Failed to fetch data"), which is the only way the
// ClusterIterator reports one, and forwards every line to out.
type logSink struct {
	out io.Writer

	mu       sync.Mutex
	scanSeq  int
	scanLast string
	refused  int
}

const iteratorFailure = "Failed to fetch data: "

func (s *logSink) Write(p []byte) (int, error) {
	line := string(bytes.TrimRight(p, "\n"))
	if i := strings.Index(line, iteratorFailure); i >= 0 {
		s.mu.Lock()
		s.scanSeq++
		s.scanLast = line[i+len(iteratorFailure):]
		s.mu.Unlock()
	}
	refused := strings.Contains(line, refusedRefreshText)
	if refused {
		s.mu.Lock()
		s.refused++
		s.mu.Unlock()
	}
	if s.out != nil && !refused {
		_, _ = fmt.Fprintf(s.out, "olric client: %s\n", line)
	}
	return len(p), nil
}

// refusedRefreshes returns how many iterator refreshes iterRefreshGuard
// refused.
func (s *logSink) refusedRefreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// scanFailures returns how many iterator failures were logged so far and
// the text of the latest.
func (s *logSink) scanFailures() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scanSeq, s.scanLast
}
