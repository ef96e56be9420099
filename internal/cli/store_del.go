package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/ui"
)

type storeDelOptions struct {
	cmdInput
	storeConn
	session   sessionFlags
	ifCluster string
	yes       bool
	// key and sess (nil for --key) are set by validate.
	key  string
	sess *store.Session
}

// validate resolves the key, checks --if-cluster when given, then the
// connection flags.
func (o *storeDelOptions) validate(env *Env) (err error) {
	if o.key, o.sess, err = o.session.resolve(o.flagGiven); err != nil {
		return err
	}
	if o.flagGiven("if-cluster") {
		if err := store.ValidateValue(o.ifCluster); err != nil {
			return UsageErr(fmt.Errorf("--if-cluster: %w", err))
		}
	}
	return o.validateConn(env, o.flagGiven)
}

func newStoreDelCommand(env *Env, conn *connFlags) *cobra.Command {
	o := &storeDelOptions{storeConn: storeConn{conn: conn}}
	cmd := &cobra.Command{
		Use:     "del",
		Aliases: []string{"delete"},
		Short:   "Delete one entry and confirm it is gone (dry run unless --yes)",
		Long: `Delete one last-cluster entry, named by --key or by the session flags: the
operator's equivalent of releasing a session. The session's next request
is then classified new and placed afresh.

Olric's delete reply does not say whether anything was removed, so lcctl
reads the entry first, deletes it, and reads again to confirm. With
--if-cluster it deletes only when the entry still points to that cluster.
The read confirms absence at the current owners only: when a member
holding a copy was missing, did not answer, or the partition moved during
the delete, the outcome is "unconfirmed" (the copy may come back: run
again after the member returns or is removed). A member the others had
dropped before the delete started is seen by no client: "deleted" says
at which owners the entry was confirmed absent.

Exit status 1 when there is no entry, when --if-cluster does not match, or
when the delete could not be confirmed. Without --yes this is a dry run.`,
		Example: `  lcctl store del --routing-key fn-alpha --model company/model --session-id session-1 --source prompt_cache_key --yes
  lcctl store del --key lc:v1:eee6… --if-cluster cluster-b --yes`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runStoreDel)
	o.session.register(cmd.Flags(), true)
	cmd.Flags().StringVar(&o.ifCluster, "if-cluster", "", "delete only if the entry points to this cluster")
	cmd.Flags().BoolVar(&o.yes, "yes", false, "delete; without it nothing is changed")
	return cmd
}

// delJSON is the output of `store del -o json`.
type delJSON struct {
	Key     string       `json:"key"`
	Applied bool         `json:"applied"`
	Outcome string       `json:"outcome"`
	Before  *entryJSON   `json:"before"`
	Session *sessionJSON `json:"session,omitempty"`
	// Holders, MembersAway and Unconfirmed are set for the outcomes
	// deleted and unconfirmed: the members where the entry was read as
	// absent (the copy holders of its partition), the members missing
	// from the member list during the delete, and why an unconfirmed
	// delete is not confirmed.
	Holders     []string `json:"confirmed_absent_at,omitempty"`
	MembersAway []string `json:"members_away,omitempty"`
	Unconfirmed string   `json:"unconfirmed_reason,omitempty"`
}

// runStoreDel deletes the validated entry, or with o.yes false shows
// what it would delete.
func runStoreDel(ctx context.Context, env *Env, o *storeDelOptions) error {
	key, sess := o.key, o.sess
	c, err := o.dial(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()
	out := delJSON{Key: key, Applied: o.yes}
	if !o.session.showSession {
		sess = nil
	}
	out.Session = toSessionJSON(sess)
	var before store.Entry
	if o.yes {
		res, err := c.Delete(ctx, key, o.ifCluster)
		if err != nil {
			return fail(err)
		}
		out.Outcome = string(res.Outcome)
		before = res.Before
		if res.Outcome == store.Deleted || res.Outcome == store.Unconfirmed {
			out.Holders, out.Unconfirmed = nonNil(res.Holders), res.Unconfirmed
			if len(res.MembersAway) > 0 {
				out.MembersAway = res.MembersAway
			}
		}
	} else {
		before, err = c.Get(ctx, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			out.Outcome = string(store.Absent)
		case err != nil:
			return fail(err)
		case o.ifCluster != "" && before.Cluster != o.ifCluster:
			out.Outcome = string(store.Changed)
		default:
			out.Outcome = "would_delete"
		}
	}
	if out.Outcome != string(store.Absent) {
		j := newEntryJSON(before)
		out.Before = &j
	}
	if env.Global.JSON() {
		if err := writeJSON(env.Out, "store-del", out); err != nil {
			return err
		}
	} else {
		printSessionText(env.Out, sess)
		was := ""
		if out.Before != nil {
			was = fmt.Sprintf(" (was %s, ttl %s)", textValue(before.Cluster), formatTTL(before))
		}
		switch store.DeleteOutcome(out.Outcome) {
		case store.Deleted:
			fmt.Fprintf(env.Out, "%s %s%s: confirmed absent at the current owners (%s)\n", env.Style.OK.Render("deleted"), key, was, textList(out.Holders))
		case store.Unconfirmed:
			fmt.Fprintf(env.Out, "%s %s%s: read as absent at %s, but %s; a copy may remain there and come back\nrun again after the member returns or is removed\n",
				env.Style.Warning.Render("not confirmed:"), key, was, textList(out.Holders), ui.Printable(out.Unconfirmed))
		case store.Rewritten:
			fmt.Fprintf(env.Out, "%s %s%s; it was written again since (the session is active)\n", env.Style.OK.Render("deleted"), key, was)
		case store.Absent:
			fmt.Fprintf(env.Out, "no entry %s\n", key)
		case store.Changed:
			fmt.Fprintf(env.Out, "left %s alone: it points to %s, not %s\n", key, textValue(before.Cluster), o.ifCluster)
		default:
			fmt.Fprintf(env.Out, "dry run: would delete %s%s\nrun again with --yes to delete\n", key, was)
		}
	}
	switch store.DeleteOutcome(out.Outcome) {
	case store.Absent:
		absentNote(env, c.DMap())
		return ErrFindings
	case store.Changed, store.Unconfirmed:
		return ErrFindings
	}
	return nil
}

// textList joins member names for text output, each made printable.
func textList(ms []string) string {
	if len(ms) == 0 {
		return "none known"
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = textValue(m)
	}
	return strings.Join(out, ", ")
}
