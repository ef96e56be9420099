package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/store"
)

type storeKeyOptions struct {
	cmdInput
	session    sessionFlags
	batch      bool
	partitions uint64
	// key and sess are the session's, set by validate without --batch.
	key  string
	sess *store.Session
}

// validate checks --partitions and, without --batch, resolves the key of
// the session flags; with --batch, session flags are a usage error.
func (o *storeKeyOptions) validate(*Env) (err error) {
	if o.partitions == 0 || o.partitions > 1<<20 {
		return Usagef("--partitions %d out of range 1-1048576", o.partitions)
	}
	if !o.batch {
		o.key, o.sess, err = o.session.resolve(o.flagGiven)
		return err
	}
	if o.session.anySession(o.flagGiven) {
		return Usagef("--batch reads every session from stdin: do not also give session flags")
	}
	return nil
}

func newStoreKeyCommand(env *Env, conn *connFlags) *cobra.Command {
	o := &storeKeyOptions{}
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Print the store key of a session, byte-identical to the gateway's",
		Long: `Print the store key ("lc:v1:" + hex SHA-256 of the length-prefixed routing
key, model and cache affinity key) of one session given by flags, or of one
session per JSON line on stdin with --batch.

The affinity key is given verbatim (--affinity-key) or derived from the raw
session id as the gateway does (--session-id with --source):
prompt_cache_key and conversation_id are hashed to mt:v1:session:<sha256>;
a header value is trimmed and passed through when it already is an affinity
key. Raw parts are printed only with --show-session. No Olric call is made.

Batch input: one JSON object per line with the fields routing_key, model
(or client_model), and affinity_key (or session_id and source). Errors name
the line; the exit code is 2 when any line was rejected.`,
		Example: `  lcctl store key --routing-key fn-alpha --model company/model --session-id session-1 --source prompt_cache_key
  lcctl store key --client-model fn-alpha/company/model --affinity-key mt:v1:session:8409…
  printf '%s\n' '{"routing_key":"fn-alpha","model":"company/model","session_id":"session-1","source":"prompt_cache_key"}' | lcctl store key --batch -o json`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runStoreKey)
	o.session.register(cmd.Flags(), false)
	cmd.Flags().BoolVar(&o.batch, "batch", false, "read one JSON object per line from stdin")
	cmd.Flags().Uint64Var(&o.partitions, "partitions", store.DefaultPartitionCount, "Olric partition count, for the partition shown in JSON output")
	return cmd
}

// keyJSON is one line of `store key -o json` output.
type keyJSON struct {
	Line       int          `json:"line,omitempty"`
	Key        string       `json:"key,omitempty"`
	Partition  *uint64      `json:"partition,omitempty"`
	Partitions uint64       `json:"partitions,omitempty"`
	Session    *sessionJSON `json:"session,omitempty"`
	Error      string       `json:"error,omitempty"`
}

// runStoreKey prints the validated session's key, or with --batch the
// key of each JSON line on stdin.
func runStoreKey(_ context.Context, env *Env, o *storeKeyOptions) error {
	emit := func(line int, key string, s *store.Session) error {
		if env.Global.JSON() {
			p := store.Partition(store.DMapName, key, o.partitions)
			j := keyJSON{Line: line, Key: key, Partition: &p, Partitions: o.partitions}
			if o.session.showSession {
				j.Session = toSessionJSON(s)
			}
			return writeJSONLine(env.Out, "store-key", j)
		}
		if o.session.showSession {
			fmt.Fprintf(env.Out, "%s routing_key=%q model=%q affinity_key=%q\n", key, s.RoutingKey, s.Model, s.AffinityKey)
			return nil
		}
		_, err := fmt.Fprintln(env.Out, key)
		return err
	}
	if !o.batch {
		return emit(0, o.key, o.sess)
	}
	bad, total := 0, 0
	err := store.ReadSessionLines(env.In, func(l store.BatchLine) error {
		total++
		if l.Err != nil {
			bad++
			writeProblem(env.Err, fmt.Sprintf("stdin:%d: %v", l.Line, l.Err))
			if env.Global.JSON() {
				return writeJSONLine(env.Out, "store-key", keyJSON{Line: l.Line, Error: l.Err.Error()})
			}
			return nil
		}
		s := l.Session
		return emit(l.Line, s.Key(), &s)
	})
	if err != nil {
		return UsageErr(fmt.Errorf("stdin: %w", err))
	}
	if total == 0 {
		return Usagef("--batch: stdin has no JSON lines")
	}
	if bad > 0 {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%d of %d lines rejected", bad, total)}
	}
	return nil
}
