package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lcctl/lcctl/internal/readlimit"
	"github.com/lcctl/lcctl/internal/store"
)

// Environment variables read by the store commands.
const (
	// EnvOlricAddrs is the default for --olric.
	EnvOlricAddrs = "LCCTL_OLRIC_ADDRS"
	// EnvOlricPassword is the Olric password (prefer it, or
	// --password-file, to a flag: flags show up in process lists).
	EnvOlricPassword = "LCCTL_OLRIC_PASSWORD"
	// EnvOlricDMap is the default for --dmap. lcctl does not read the
	// gateway's OLRIC_DMAP_NAME: that names the rate-limit DMap, never the
	// last-cluster one (gateway.md §5.1, §8.2).
	EnvOlricDMap = "LCCTL_OLRIC_DMAP"
)

// newStoreCommand builds `lcctl store` and its subcommands.
func newStoreCommand(env *Env) *cobra.Command {
	conn := &connFlags{}
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Inspect and change the gateway's last-cluster store (Olric DMap stargate-last-cluster)",
		Long: `Inspect and change the LLM API gateway's last-cluster entries in a live Olric
cluster: derive store keys, read, write and delete entries, scan and evict
entries of a cluster, and show cluster statistics.

Every member of the Olric cluster must be reachable from where lcctl runs:
the client dials each member by its name (the gateway pod IP and port 3320).
Run lcctl in a pod of the gateway's namespace or with kubectl debug; see
'lcctl docs store'. Commands that change the store are dry runs unless --yes is
given.

For a local Olric to try them on, run 'lcctl store serve-dev --seed-demo'
in one shell and the commands in another.`,
		Example: `  lcctl store serve-dev --seed-demo          # one shell: a local Olric with demo sessions
  export LCCTL_OLRIC_ADDRS=127.0.0.1:3320     # another shell
  lcctl store get --routing-key fn-alpha --model company/model --session-id session-1 --source prompt_cache_key
  lcctl store scan --cluster cluster-c --limit 5
  lcctl store evict --cluster cluster-c`,
		// A bare or unknown subcommand is a usage error for every command
		// group: requireSubcommands (root.go).
	}
	conn.register(cmd.PersistentFlags())
	for _, add := range []func(*Env, *connFlags) *cobra.Command{
		newStoreKeyCommand,
		newStoreGetCommand,
		newStorePutCommand,
		newStoreDelCommand,
		newStoreScanCommand,
		newStoreEvictCommand,
		newStoreStatsCommand,
		newStoreProbeCommand,
		newStoreServeDevCommand,
	} {
		cmd.AddCommand(add(env, conn))
	}
	return cmd
}

// connFlags are the connection flags every store subcommand shares.
type connFlags struct {
	addrs          string
	dmap           string
	dialTimeout    time.Duration
	requestTimeout time.Duration
	passwordFile   string
	tls            bool
	tlsCA          string
	tlsServerName  string
	tlsCert        string
	tlsKey         string
	tlsInsecure    bool
	mapAddrs       []string
	debug          bool
}

func (f *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.addrs, "olric", "", "Olric members, host:port[,host:port] (default $"+EnvOlricAddrs+")")
	fs.StringVar(&f.dmap, "dmap", "", "Olric DMap holding the last-cluster entries (default $"+EnvOlricDMap+", else "+store.DMapName+")")
	fs.DurationVar(&f.dialTimeout, "dial-timeout", store.DefaultDialTimeout, "timeout for one connection attempt")
	fs.DurationVar(&f.requestTimeout, "request-timeout", store.DefaultRequestTimeout, "timeout for one Olric request")
	fs.StringVar(&f.passwordFile, "password-file", "", "file holding the Olric password (default $"+EnvOlricPassword+"; the gateway's Olric has none)")
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS (to a TLS proxy in front of Olric; Olric itself has no TLS)")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM file of CAs to verify the server with (implies --tls)")
	fs.StringVar(&f.tlsServerName, "tls-server-name", "", "server name to verify (implies --tls)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM client certificate (with --tls-key; implies --tls)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM client key (with --tls-cert)")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure-skip-verify", false, "do not verify the server certificate (testing only)")
	fs.StringArrayVar(&f.mapAddrs, "map-addr", nil, "dial member MEMBER at LOCAL instead, as MEMBER=LOCAL (repeatable; for one port-forward per pod)")
	fs.BoolVar(&f.debug, "debug", false, "print the olric client's own log lines to stderr")
}

// options validates the flags and builds store.Options; given reports
// which flags were given (cmdInput.flagGiven): an explicitly empty --olric
// or --dmap (an unset shell variable) is an error, not the environment's
// or the built-in default. Errors are usage errors.
func (f *connFlags) options(env *Env, given func(string) bool) (store.Options, error) {
	var o store.Options
	if explicitlyEmpty(given, "olric", f.addrs) {
		return o, Usagef("--olric is empty: give host:port[,host:port], or leave the flag out to use $%s", EnvOlricAddrs)
	}
	addrs := f.addrs
	if addrs == "" {
		addrs = env.Streams.Env(EnvOlricAddrs)
	}
	if strings.TrimSpace(addrs) == "" {
		return o, Usagef("no Olric address: give --olric host:port[,host:port] or set %s", EnvOlricAddrs)
	}
	list, err := store.ParseAddrs(addrs)
	if err != nil {
		return o, UsageErr(fmt.Errorf("--olric: %w", err))
	}
	o.Addrs = list
	if err := f.resolveDMap(env, given); err != nil {
		return o, err
	}
	o.DMap = f.dmap
	if f.dialTimeout < time.Millisecond {
		return o, Usagef("--dial-timeout %v must be at least 1ms", f.dialTimeout)
	}
	if f.requestTimeout < time.Millisecond {
		return o, Usagef("--request-timeout %v must be at least 1ms", f.requestTimeout)
	}
	o.DialTimeout, o.RequestTimeout = f.dialTimeout, f.requestTimeout
	switch {
	case f.passwordFile != "":
		b, err := readSmallFile(f.passwordFile)
		if err != nil {
			return o, UsageErr(fmt.Errorf("--password-file: %w", err))
		}
		o.Password = strings.TrimRight(string(b), "\r\n")
	default:
		o.Password = env.Streams.Env(EnvOlricPassword)
	}
	if len(f.mapAddrs) > 0 {
		o.AddrMap = map[string]string{}
		for _, m := range f.mapAddrs {
			from, to, ok := strings.Cut(m, "=")
			if !ok {
				return o, Usagef("--map-addr %q: want MEMBER=LOCAL, e.g. 10.1.2.3:3320=127.0.0.1:13320", m)
			}
			if _, err := store.ParseAddrs(from + "," + to); err != nil {
				return o, UsageErr(fmt.Errorf("--map-addr %q: %w", m, err))
			}
			o.AddrMap[from] = to
		}
	}
	if f.tls || f.tlsCA != "" || f.tlsServerName != "" || f.tlsCert != "" || f.tlsInsecure {
		cfg, err := f.tlsConfig()
		if err != nil {
			return o, UsageErr(err)
		}
		o.TLS = cfg
	}
	if f.debug {
		o.Log = env.Err
	}
	return o, nil
}

// explicitlyEmpty reports whether flag name was given (given) with a
// blank value.
func explicitlyEmpty(given func(string) bool, name, value string) bool {
	return given(name) && strings.TrimSpace(value) == ""
}

// resolveDMap applies the default to --dmap and validates it (given as
// for options).
func (f *connFlags) resolveDMap(env *Env, given func(string) bool) error {
	if explicitlyEmpty(given, "dmap", f.dmap) {
		return Usagef("--dmap is empty: give a DMap name, or leave the flag out for $%s or %q", EnvOlricDMap, store.DMapName)
	}
	if f.dmap == "" {
		f.dmap = env.Streams.Env(EnvOlricDMap)
	}
	if f.dmap == "" {
		f.dmap = store.DMapName
	}
	if err := store.ValidateDMapName(f.dmap); err != nil {
		return UsageErr(fmt.Errorf("--dmap: %w", err))
	}
	return nil
}

// smallFileLimit bounds the password and PEM files (bytes): a path such
// as /dev/zero was read until memory ran out.
const smallFileLimit = 1 << 20

// readSmallFile reads a password or PEM file of at most smallFileLimit
// bytes.
func readSmallFile(name string) ([]byte, error) {
	f, err := readlimit.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, name, smallFileLimit)
}

func (f *connFlags) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.tlsServerName, InsecureSkipVerify: f.tlsInsecure}
	if f.tlsCA != "" {
		pem, err := readSmallFile(f.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate found", f.tlsCA)
		}
		cfg.RootCAs = pool
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if f.tlsCert != "" {
		certPEM, err := readSmallFile(f.tlsCert)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert: %w", err)
		}
		keyPEM, err := readSmallFile(f.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-key: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// dial connects with options o (from f.options), warning on stderr when
// the DMap is not the gateway's; a failure is exit 1.
func (f *connFlags) dial(ctx context.Context, env *Env, o store.Options) (*store.Client, error) {
	f.warnDMap(env)
	c, err := store.Connect(ctx, o)
	if err != nil {
		return nil, &ExitError{Code: ExitFindings, Err: aboutFlag("olric", err)}
	}
	return c, nil
}

// storeConn is the connection part of a store subcommand's options: the
// connection flags the subcommands share and the store.Options they
// give, set by validateConn.
type storeConn struct {
	conn *connFlags
	opts store.Options
}

// validateConn checks the connection flags (usage errors; given as for
// connFlags.options) and keeps the store.Options.
func (s *storeConn) validateConn(env *Env, given func(string) bool) error {
	o, err := s.conn.options(env, given)
	s.opts = o
	return err
}

// dial connects with the validated options (connFlags.dial).
func (s *storeConn) dial(ctx context.Context, env *Env) (*store.Client, error) {
	return s.conn.dial(ctx, env, s.opts)
}

func (f *connFlags) warnDMap(env *Env) {
	switch f.dmap {
	case store.DMapName:
	case "rate-limit":
		fmt.Fprintf(env.Err, "%s --dmap rate-limit is the gateway's rate-limiter DMap (OLRIC_DMAP_NAME), not its last-cluster store %q\n", env.ErrStyle.Warning.Render("warning:"), store.DMapName)
	default:
		fmt.Fprintf(env.Err, "%s --dmap %q is not the gateway's last-cluster DMap %q\n", env.ErrStyle.Warning.Render("warning:"), f.dmap, store.DMapName)
	}
}

// sessionFlags name one session or store key (store key, get, put, del).
type sessionFlags struct {
	key                            string
	routingKey, model, clientModel string
	affinityKey, sessionID, source string
	showSession                    bool
	withKey                        bool
}

func (f *sessionFlags) register(fs *pflag.FlagSet, withKey bool) {
	f.withKey = withKey
	if withKey {
		fs.StringVar(&f.key, "key", "", "store key (lc:v1:<64 hex>), instead of the session flags")
	}
	fs.StringVar(&f.routingKey, "routing-key", "", "routing key (X-Routing-Key; may be empty)")
	fs.StringVar(&f.model, "model", "", "routed model (X-Model), e.g. company/model")
	fs.StringVar(&f.clientModel, "client-model", "", "the client's model field <routing-key>/<model>, split as the gateway does (instead of --routing-key and --model)")
	fs.StringVar(&f.affinityKey, "affinity-key", "", "cache affinity key (X-Cache-Affinity-Key), used verbatim")
	fs.StringVar(&f.sessionID, "session-id", "", "raw session id; the affinity key is derived as the gateway does (needs --source)")
	fs.StringVar(&f.source, "source", "", "where the client sent --session-id: prompt_cache_key, conversation_id or header")
	fs.BoolVar(&f.showSession, "show-session", false, "also print the session parts (routing key, model, affinity key)")
}

// anySession reports whether a session flag was given (given reports
// whether a flag was, as cmdInput.flagGiven).
func (f *sessionFlags) anySession(given func(string) bool) bool {
	for _, n := range []string{"routing-key", "model", "client-model", "affinity-key", "session-id", "source"} {
		if given(n) {
			return true
		}
	}
	return false
}

// input builds the SessionInput from the flags that were given.
func (f *sessionFlags) input(given func(string) bool) store.SessionInput {
	var in store.SessionInput
	set := func(name string, v *string, dst **string) {
		if given(name) {
			s := *v
			*dst = &s
		}
	}
	set("routing-key", &f.routingKey, &in.RoutingKey)
	set("model", &f.model, &in.Model)
	set("client-model", &f.clientModel, &in.ClientModel)
	set("affinity-key", &f.affinityKey, &in.AffinityKey)
	set("session-id", &f.sessionID, &in.SessionID)
	set("source", &f.source, &in.Source)
	return in
}

// resolve returns the store key named by the flags and, when it came from
// session flags, the session. Errors are usage errors.
func (f *sessionFlags) resolve(given func(string) bool) (string, *store.Session, error) {
	hasKey := f.withKey && given("key")
	hasSession := f.anySession(given)
	switch {
	case hasKey && hasSession:
		return "", nil, Usagef("give either --key or the session flags (--routing-key, --model, --affinity-key or --session-id with --source), not both")
	case hasKey:
		if err := store.ValidateKey(f.key); err != nil {
			return "", nil, UsageErr(fmt.Errorf("--key: %w", err))
		}
		return f.key, nil, nil
	case !hasSession:
		if f.withKey {
			return "", nil, Usagef("name the entry: --key lc:v1:<64 hex>, or --model with --affinity-key (or --session-id and --source), plus --routing-key")
		}
		return "", nil, Usagef("give --model with --affinity-key (or --session-id and --source), plus --routing-key; or --batch to read JSON lines from stdin")
	}
	s, err := f.input(given).Resolve()
	if err != nil {
		return "", nil, UsageErr(err)
	}
	return s.Key(), &s, nil
}

// sessionJSON is the --show-session part of JSON output.
type sessionJSON struct {
	RoutingKey  string `json:"routing_key"`
	Model       string `json:"model"`
	AffinityKey string `json:"affinity_key"`
}

func toSessionJSON(s *store.Session) *sessionJSON {
	if s == nil {
		return nil
	}
	return &sessionJSON{RoutingKey: s.RoutingKey, Model: s.Model, AffinityKey: s.AffinityKey}
}

// printSessionText prints the session parts, quoted so empty and unusual
// parts are visible.
func printSessionText(w io.Writer, s *store.Session) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "routing key  %q\nmodel        %q\naffinity key %q\n", s.RoutingKey, s.Model, s.AffinityKey)
}

// entryJSON is the JSON form of a store entry (store get, store scan).
type entryJSON struct {
	Type    string `json:"type,omitempty"`
	Key     string `json:"key"`
	Found   *bool  `json:"found,omitempty"`
	Cluster string `json:"cluster,omitempty"`
	// Valid is false when the gateway would treat the value as a miss.
	Valid *bool `json:"valid,omitempty"`
	// TTLMs is the remaining TTL in milliseconds, -1 when the entry never
	// expires.
	TTLMs     *int64  `json:"ttl_ms,omitempty"`
	ExpiresAt *string `json:"expires_at,omitempty"`
	WrittenAt *string `json:"written_at,omitempty"`
}

func newEntryJSON(e store.Entry) entryJSON {
	found, valid := true, e.Valid
	ttl := int64(e.TTL() / time.Millisecond)
	if e.TTL() < 0 {
		ttl = -1
	}
	j := entryJSON{Key: e.Key, Found: &found, Cluster: e.Cluster, Valid: &valid, TTLMs: &ttl}
	if !e.ExpiresAt.IsZero() {
		s := formatStoreTime(e.ExpiresAt)
		j.ExpiresAt = &s
	}
	if !e.WrittenAt.IsZero() {
		s := formatStoreTime(e.WrittenAt)
		j.WrittenAt = &s
	}
	return j
}

// storeTimeLayout is the one format of store times (expires_at,
// written_at; text and JSON): RFC 3339 in UTC with exactly three
// fractional digits, "2026-11-30T00:10:13.010Z". Olric keeps the expiry
// in Unix ms, so milliseconds are the precision both times share; the
// write time's nanoseconds are truncated.
const storeTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// formatStoreTime renders t in storeTimeLayout (UTC, milliseconds
// truncated).
func formatStoreTime(t time.Time) string { return t.UTC().Format(storeTimeLayout) }

// formatTTL renders a remaining TTL for text output.
func formatTTL(e store.Entry) string {
	d := e.TTL()
	switch {
	case d < 0:
		return "no expiry"
	case d < time.Second:
		return d.String()
	}
	return d.Truncate(time.Second).String()
}
