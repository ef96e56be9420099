package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/store"
)

type storePutOptions struct {
	cmdInput
	storeConn
	session   sessionFlags
	cluster   string
	ttl       string
	ifAbsent  bool
	ifPresent bool
	yes       bool
	// Set by validate: the entry's key and session (nil for --key), the
	// TTL and the write mode.
	key      string
	sess     *store.Session
	ttlValue time.Duration
	mode     store.PutMode
}

func newStorePutCommand(env *Env, conn *connFlags) *cobra.Command {
	o := &storePutOptions{storeConn: storeConn{conn: conn}}
	cmd := &cobra.Command{
		Use:   "put",
		Short: "Write one entry as the gateway would (dry run unless --yes)",
		Long: `Write a last-cluster entry exactly as the gateway does: the cluster id as raw
bytes with a TTL in milliseconds (PX), replacing any entry and resetting its
TTL. The entry is named by --key or by the session flags.

lcctl refuses, before sending anything, what the gateway would never store:
an empty cluster id, one over 256 bytes or with bytes outside printable
ASCII, a key that is not lc:v1:<64 hex>, and a TTL under 1ms or not a whole
number of milliseconds (Olric would keep such an entry forever). Spaces
around --cluster are trimmed first, as the gateway trims the cluster id
before it validates it ("  cluster-b  " stores "cluster-b").

Without --yes this is a dry run: it reads the current entry and shows what
would change.`,
		Example: `  lcctl store put --routing-key fn-alpha --model company/model --session-id session-1 --source prompt_cache_key --cluster cluster-a --yes
  lcctl store put --key lc:v1:eee6… --cluster cluster-a --ttl 30m --if-present --yes`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runStorePut)
	o.session.register(cmd.Flags(), true)
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "cluster id to store (required)")
	f.StringVar(&o.ttl, "ttl", store.DefaultTTL.String(), "entry lifetime, a Go duration of at least 1ms")
	f.BoolVar(&o.ifAbsent, "if-absent", false, "write only when there is no entry (Olric NX)")
	f.BoolVar(&o.ifPresent, "if-present", false, "write only when there is an entry (Olric XX)")
	f.BoolVar(&o.yes, "yes", false, "write; without it nothing is changed")
	return cmd
}

// putJSON is the output of `store put -o json`.
type putJSON struct {
	Key     string       `json:"key"`
	Cluster string       `json:"cluster"`
	TTLMs   int64        `json:"ttl_ms"`
	Applied bool         `json:"applied"`
	Before  *entryJSON   `json:"before"`
	Session *sessionJSON `json:"session,omitempty"`
}

// validate resolves the key, trims and checks --cluster, parses --ttl and
// the write mode, then checks the connection flags.
func (o *storePutOptions) validate(env *Env) (err error) {
	if o.key, o.sess, err = o.session.resolve(o.flagGiven); err != nil {
		return err
	}
	if !o.flagGiven("cluster") {
		return Usagef("--cluster is required")
	}
	// The gateway trims surrounding whitespace from the cluster id before
	// it validates and stores it; so does lcctl, so "  cluster-b  " stores
	// "cluster-b" as a gateway write would.
	o.cluster = strings.TrimSpace(o.cluster)
	if err := store.ValidateValue(o.cluster); err != nil {
		return UsageErr(fmt.Errorf("--cluster: %w", err))
	}
	if o.ttlValue, err = store.ParseTTL(o.ttl); err != nil {
		return UsageErr(fmt.Errorf("--ttl: %w", err))
	}
	o.mode = store.PutAlways
	switch {
	case o.ifAbsent && o.ifPresent:
		return Usagef("--if-absent and --if-present exclude each other")
	case o.ifAbsent:
		o.mode = store.PutIfAbsent
	case o.ifPresent:
		o.mode = store.PutIfPresent
	}
	return o.validateConn(env, o.flagGiven)
}

// runStorePut writes the validated entry, or with o.yes false shows what
// it would write.
func runStorePut(ctx context.Context, env *Env, o *storePutOptions) error {
	key, sess, ttl, mode := o.key, o.sess, o.ttlValue, o.mode
	c, err := o.dial(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()
	before, err := c.Get(ctx, key)
	var beforeJ *entryJSON
	switch {
	case err == nil:
		j := newEntryJSON(before)
		beforeJ = &j
	case !errors.Is(err, store.ErrNotFound):
		return fail(err)
	}
	if o.yes {
		if err := c.Put(ctx, key, o.cluster, ttl, mode); err != nil {
			if errors.Is(err, store.ErrConditionNotMet) {
				return failf("%v: nothing written", err)
			}
			return fail(err)
		}
	}
	if !o.session.showSession {
		sess = nil
	}
	if env.Global.JSON() {
		return writeJSON(env.Out, "store-put", putJSON{Key: key, Cluster: o.cluster, TTLMs: int64(ttl / time.Millisecond), Applied: o.yes, Before: beforeJ, Session: toSessionJSON(sess)})
	}
	printSessionText(env.Out, sess)
	was := "no entry"
	if beforeJ != nil {
		was = fmt.Sprintf("%s, ttl %s", textValue(before.Cluster), formatTTL(before))
	}
	if o.yes {
		fmt.Fprintf(env.Out, "%s %s = %s (ttl %v; was: %s)\n", env.Style.OK.Render("wrote"), key, o.cluster, ttl, was)
		return nil
	}
	switch {
	case mode == store.PutIfAbsent && beforeJ != nil:
		fmt.Fprintf(env.Out, "dry run: would not write %s: an entry exists (%s)\n", key, was)
	case mode == store.PutIfPresent && beforeJ == nil:
		fmt.Fprintf(env.Out, "dry run: would not write %s: there is no entry\n", key)
	default:
		fmt.Fprintf(env.Out, "dry run: would write %s = %s (ttl %v; now: %s)\n", key, o.cluster, ttl, was)
	}
	fmt.Fprintln(env.Out, "run again with --yes to write")
	return nil
}
