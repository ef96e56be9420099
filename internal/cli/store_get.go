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

type storeGetOptions struct {
	cmdInput
	storeConn
	session sessionFlags
	// key and sess (nil for --key) are set by validate.
	key  string
	sess *store.Session
}

// validate resolves the entry's key, then checks the connection flags.
func (o *storeGetOptions) validate(env *Env) (err error) {
	if o.key, o.sess, err = o.session.resolve(o.flagGiven); err != nil {
		return err
	}
	return o.validateConn(env, o.flagGiven)
}

func newStoreGetCommand(env *Env, conn *connFlags) *cobra.Command {
	o := &storeGetOptions{storeConn: storeConn{conn: conn}}
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Read one entry: cluster, remaining TTL, partition and owners",
		Long: `Read one last-cluster entry, named by --key or by the session flags (as for
'lcctl store key'), and print its value (the cluster id), remaining TTL,
expiry and write time, and where it lives: partition, current owner,
previous owners while a partition moves, and replicas.

Exit status 1 when the entry is absent or expired. A value the gateway
would treat as a miss (empty, over 256 bytes, not printable ASCII) is shown
with a warning.`,
		Example: `  lcctl store get --routing-key fn-alpha --model company/model --session-id session-1 --source prompt_cache_key
  lcctl store get --key lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6 -o json`,
		Args: cobra.NoArgs,
	}
	o.session.register(cmd.Flags(), true)
	return wireLeaf(cmd, env, o, runStoreGet)
}

// getJSON is the output of `store get -o json`.
type getJSON struct {
	entryJSON
	store.Location
	Session *sessionJSON `json:"session,omitempty"`
}

// runStoreGet reads and prints the validated entry.
func runStoreGet(ctx context.Context, env *Env, o *storeGetOptions) error {
	key, sess := o.key, o.sess
	c, err := o.dial(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()
	e, err := c.Get(ctx, key)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fail(err)
	}
	loc := c.Locate(key)
	if !o.session.showSession {
		sess = nil
	}
	out := getJSON{entryJSON: entryJSON{Key: key, Found: &found}, Location: loc, Session: toSessionJSON(sess)}
	if found {
		out.entryJSON = newEntryJSON(e)
	}
	env.emit("store-get", out)
	if env.Global.JSON() {
		if err := writeJSON(env.Out, "store-get", out); err != nil {
			return err
		}
	} else {
		printSessionText(env.Out, sess)
		w := env.Out
		fmt.Fprintf(w, "key          %s\n", key)
		if found {
			fmt.Fprintf(w, "cluster      %s\n", textValue(e.Cluster))
			if e.ExpiresAt.IsZero() {
				fmt.Fprintf(w, "ttl          no expiry\n")
			} else {
				fmt.Fprintf(w, "ttl          %s (expires %s)\n", formatTTL(e), formatStoreTime(e.ExpiresAt))
			}
			if !e.WrittenAt.IsZero() {
				fmt.Fprintf(w, "written      %s (%s ago)\n", formatStoreTime(e.WrittenAt), e.ReadAt.Sub(e.WrittenAt).Truncate(time.Millisecond))
			}
		} else {
			fmt.Fprintf(w, "cluster      %s\n", env.Style.Warning.Render("(not found)"))
		}
		printLocation(env, loc)
	}
	if !found {
		absentNote(env, c.DMap())
		return ErrFindings
	}
	if !e.Valid {
		fmt.Fprintf(env.Err, "%s the gateway treats this value as a miss: %v\n", env.ErrStyle.Warning.Render("warning:"), store.ValidateValue(e.Cluster))
	}
	if e.ExpiresAt.IsZero() {
		fmt.Fprintf(env.Err, "%s the entry has no TTL; the gateway always writes one\n", env.ErrStyle.Warning.Render("warning:"))
	}
	return nil
}

// textValue renders a stored value for text output: as is when printable,
// quoted otherwise.
func textValue(v string) string {
	if store.ValidateValue(v) == nil && strings.TrimSpace(v) == v {
		return v
	}
	return fmt.Sprintf("%q", v)
}

func printLocation(env *Env, loc store.Location) {
	w := env.Out
	fmt.Fprintf(w, "partition    %d of %d\n", loc.Partition, loc.Partitions)
	fmt.Fprintf(w, "owner        %s\n", loc.Owner)
	if len(loc.PreviousOwners) > 0 {
		fmt.Fprintf(w, "previous     %s (partition moving)\n", strings.Join(loc.PreviousOwners, ", "))
	}
	if len(loc.Replicas) > 0 {
		fmt.Fprintf(w, "replicas     %s\n", strings.Join(loc.Replicas, ", "))
	}
}
