package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/jsonobj"
	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/migrate"
	"github.com/lcctl/lcctl/internal/migrate/safewrite"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/ui"
	"github.com/lcctl/lcctl/internal/validate"
)

// migrateOptions are the flags of `lcctl migrate` (docs/migrate.md).
type migrateOptions struct {
	// cmdInput's args are the FILE arguments.
	cmdInput
	Strategy               string
	MaxQueued              uint64
	AffinityWaitMs         uint64
	Only                   []string
	DefaultModels          []string
	NoPreserveHeaderMethod bool
	Write                  bool
	Backup                 bool
	// DataKey keeps only the ConfigMap data entries with this key.
	DataKey string
	// ValuesKey is the key path of the lb-config in a Helm values file.
	ValuesKey string
	// fs replaces the real file system in tests (disk-full simulation).
	fs safewrite.FS
	// mo is the migrate.Options of the flags, set by validate.
	mo migrate.Options
	// memLimit is the run's soft memory limit (migrate_memory.go).
	memLimit memoryLimit
}

// validate checks the flags (--only, --default-models, --values-key and
// --data-key not empty when given, not both of the last two, --strategy, migrate.Options.Check, --backup with --write) and
// the FILE arguments (at most one "-", never with --write).
func (opts *migrateOptions) validate(*Env) error {
	// --only "" (an unset shell variable) parses as no list at all,
	// which means every model: refuse it rather than widen the run.
	for _, f := range []struct {
		name string
		v    []string
	}{{"only", opts.Only}, {"default-models", opts.DefaultModels}} {
		if opts.flagGiven(f.name) && len(f.v) == 0 {
			return Usagef("--%s is empty: give model IDs (comma-separated), or leave the flag out", f.name)
		}
	}
	if err := validateValuesKeyFlags(opts.flagGiven, opts.ValuesKey, opts.DataKey); err != nil {
		return err
	}
	mo := migrate.Options{MaxQueued: opts.MaxQueued, AffinityWaitMs: opts.AffinityWaitMs,
		Only: opts.Only, DefaultModels: opts.DefaultModels, NoPreserveHeaderMethod: opts.NoPreserveHeaderMethod}
	if opts.Strategy == "" {
		return Usagef("--strategy is required: bounded (keep pulsar-wait-and-widen, add max_queued and cache_affinity_wait_ms) or pulsar (switch to pulsar, unlimited stickiness)")
	}
	s, err := migrate.ParseStrategy(opts.Strategy)
	if err != nil {
		return UsageErr(err)
	}
	mo.Strategy = s
	if err := mo.Check(); err != nil {
		return UsageErr(err)
	}
	if opts.Backup && !opts.Write {
		return Usagef("--backup needs --write")
	}
	stdin := 0
	for _, a := range opts.args {
		if a == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return Usagef("standard input (-) can be given only once")
	}
	if stdin > 0 && opts.Write {
		return Usagef("--write cannot rewrite standard input: give a file name, or drop --write to see the diff")
	}
	opts.mo = mo
	return nil
}

func newMigrateCommand(env *Env) *cobra.Command {
	opts := &migrateOptions{MaxQueued: migrate.DefaultMaxQueued, AffinityWaitMs: migrate.DefaultAffinityWaitMs}
	cmd := &cobra.Command{
		Use:   "migrate --strategy bounded|pulsar [flags] FILE...",
		Short: "Rewrite no-SLO pulsar-wait-and-widen entries before the last-cluster release",
		Long: `Rewrite the pulsar-wait-and-widen entries without a queue SLO (no
max_queue_time_floor_ms + max_queue_time_ceil_ms pair) before the Stargate
release that removes their "eligible primary wins immediately" shortcut.
Without the shortcut such an entry sends a request away from its rank-1
cluster as soon as rank 1 has no free engine slot.

Choose per run what the entries keep:
  --strategy bounded  keep pulsar-wait-and-widen; add max_queued (N) and
                      cache_affinity_wait_ms (X) where missing: rank 1 keeps
                      a key's requests while it has room for N queued
                      requests and a request waits up to X ms for it.
                      Needs a Stargate that knows cache_affinity_wait_ms for
                      pulsar-wait-and-widen (see 'lcctl docs rollout').
  --strategy pulsar   switch to pulsar: unlimited stickiness to an eligible
                      rank 1, as today; the behaviour this gives up is
                      listed per entry.

Without --write, the change is printed as a unified diff (stdout) with a
report (stderr) and nothing is written. With --write, each file is
replaced atomically, keeping its mode, after the result passed lcctl
validate, and the diff of what was written is printed; --backup keeps
FILE.bak. Formatting outside the changed entries
is kept byte for byte (YAML comments included).

Exit codes: 0 nothing to migrate (or everything written with --write);
1 changes pending (without --write), or an entry or file that cannot be
migrated; 2 usage error, or a file that cannot be read or decoded.`,
		Example: `  lcctl migrate --strategy bounded lb-config.json
  lcctl migrate --strategy bounded --max-queued 4 --affinity-wait-ms 300 --write --backup lb-config.json
  lcctl migrate --strategy pulsar --only meta/llama-3.3-70b-instruct lb-config.yaml
  lcctl migrate --strategy bounded --default-models model-a,model-b lb-config.json
  lcctl migrate --strategy bounded --output json lb-config.json`,
		Args: needsArgs("an lb-config file or folder to migrate"),
	}
	wireLeaf(cmd, env, opts, runMigrate)
	f := cmd.Flags()
	f.StringVar(&opts.Strategy, "strategy", "", "migration target: bounded (keep pulsar-wait-and-widen, bound the stickiness) or pulsar (keep unlimited stickiness); required")
	f.Uint64Var(&opts.MaxQueued, "max-queued", migrate.DefaultMaxQueued, "N: max_queued written where missing (requests admitted above max_engine_concurrency before a request leaves rank 1)")
	f.Uint64Var(&opts.AffinityWaitMs, "affinity-wait-ms", migrate.DefaultAffinityWaitMs, "X: cache_affinity_wait_ms written where missing (ms a request waits for rank 1 before widening; below 60000)")
	f.StringSliceVar(&opts.Only, "only", nil, "migrate only these model IDs (comma-separated): their models entries and model-level request_algorithms; a listed model without a models entry gets a bounded entry of its own when default is pulsar-wait-and-widen (bounded)")
	f.StringSliceVar(&opts.DefaultModels, "default-models", nil, "models routed by a pulsar-wait-and-widen default that get a bounded models entry of their own; default stays as it is (bounded only)")
	f.BoolVar(&opts.NoPreserveHeaderMethod, "no-preserve-header-method", false, "with --strategy pulsar, do not add a bounded pulsar-wait-and-widen entry that keeps x-routing-method: pulsar-wait-and-widen working")
	f.BoolVarP(&opts.Write, "write", "w", false, "rewrite the files atomically (the diff of what was written is still printed)")
	f.BoolVar(&opts.Backup, "backup", false, "with --write, keep the original as FILE.bak")
	addValuesKeyFlag(f, &opts.ValuesKey, &opts.DataKey)
	_ = cmd.RegisterFlagCompletionFunc("strategy", cobra.FixedCompletions([]string{"bounded", "pulsar"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// migrateReport is the JSON output of `lcctl migrate --output json`
// (schema lcctl.migrate/v1, stamped by writeJSON; documented in
// docs/migrate.md).
type migrateReport struct {
	// Strategy, MaxQueued, AffinityWaitMs, Only, DefaultModels,
	// PreserveHeaderMethod and Write echo the options. MaxQueued, the
	// max_queued value migrate writes (--max-queued), goes under
	// lb.FieldMaxQueued's name after strategy (MarshalJSON).
	Strategy             string   `json:"strategy"`
	MaxQueued            uint64   `json:"-"`
	AffinityWaitMs       uint64   `json:"affinity_wait_ms"`
	Only                 []string `json:"only"`
	DefaultModels        []string `json:"default_models"`
	PreserveHeaderMethod bool     `json:"preserve_header_method"`
	Write                bool     `json:"write"`
	// Files has one report per file, in argument order (a file named
	// twice is reported once).
	Files []migrateFileReport `json:"files"`
	// ChangesPending: some file has changes that were not written.
	ChangesPending bool `json:"changes_pending"`
	// Failed: some file was refused, would be invalid, could not be read
	// or could not be written.
	Failed bool `json:"failed"`
}

// MarshalJSON writes r as its tags say, with MaxQueued under
// lb.FieldMaxQueued's name after strategy (a struct tag cannot name the
// registry). Errors: those of encoding/json.
func (r migrateReport) MarshalJSON() ([]byte, error) {
	type plain migrateReport // without this method
	return jsonobj.MarshalAfter(plain(r), "strategy", jsonobj.Member{Key: lb.FieldMaxQueued.Name, Value: r.MaxQueued})
}

// migrateFileReport is one file of a migrateReport.
type migrateFileReport struct {
	File string `json:"file"`
	// Format is json, yaml, or unknown when the file could not be read.
	Format string `json:"format"`
	// Status is unchanged, changes_pending, migrated (written), refused,
	// invalid_result, unreadable or write_failed.
	Status string `json:"status"`
	// Backup is the backup path when one was written or kept, else "".
	Backup string `json:"backup"`
	// RequiresAffinityWaitStargate: the migrated file writes
	// cache_affinity_wait_ms on pulsar-wait-and-widen, which Stargate
	// releases before the pulsar-wait-and-widen affinity wait reject.
	RequiresAffinityWaitStargate bool `json:"requires_affinity_wait_stargate"`
	// Changes are the rewritten and added entries (M15); empty unless the
	// status is changes_pending, migrated, write_failed or invalid_result.
	Changes []migrate.Change `json:"changes"`
	// Availability lists x-routing-method availability changes per config
	// set (M8).
	Availability []migrate.Availability `json:"availability"`
	// Notes are refusals (error), consequences (warning) and entries left
	// alone on purpose (info).
	Notes []migrate.Note `json:"notes"`
	// Errors are decoding errors (unreadable), the validation errors of
	// the rewritten file (invalid_result), or the write error
	// (write_failed), with the fields of lcctl validate's diagnostics.
	Errors []validateDiagnostic `json:"errors"`
	// Diff is the unified diff of the change ("" when none).
	Diff string `json:"diff"`
	// Source is where the lb-config sits inside a Kubernetes manifest or
	// Helm values file, "" for an lb-config file (see validate's source).
	Source string `json:"source"`
}

// Statuses added by the command on top of migrate.Status.
const (
	statusMigrated    = "migrated"
	statusWriteFailed = "write_failed"
	// statusWriteUnconfirmed: written, but another process edited the file
	// during the rename (safewrite.ErrEditedDuringReplace); exit 1.
	statusWriteUnconfirmed = "write_unconfirmed"
)

// runMigrate migrates the files of the validated options and reports.
func runMigrate(_ context.Context, env *Env, opts *migrateOptions) error {
	mo, s := opts.mo, opts.mo.Strategy
	files, err := expandArgs(opts.args, []string{".json", ".yaml", ".yml"})
	if err != nil {
		return UsageErr(err)
	}
	files = dropSameFiles(env, files)
	defer opts.memLimit.restore()
	report := migrateReport{Strategy: s.String(), MaxQueued: opts.MaxQueued, AffinityWaitMs: opts.AffinityWaitMs,
		Only: nonNil(opts.Only), DefaultModels: nonNil(opts.DefaultModels), PreserveHeaderMethod: !opts.NoPreserveHeaderMethod, Write: opts.Write}
	unreadable := false
	for _, name := range files {
		for _, fr := range migrateFile(env, opts, mo, name) {
			switch fr.Status {
			case string(migrate.StatusUnreadable), string(migrate.StatusNotLBConfig):
				unreadable = true
				report.Failed = true
			case string(migrate.StatusRefused), string(migrate.StatusInvalid), statusWriteFailed, statusWriteUnconfirmed:
				report.Failed = true
			case string(migrate.StatusPending):
				report.ChangesPending = true
			}
			report.Files = append(report.Files, fr)
		}
	}
	if env.Global.JSON() {
		if err := writeMigrateJSON(env.Out, report); err != nil {
			return err
		}
	} else {
		// A diff that cannot be printed (a full disk, a closed pipe) is a
		// failure: the report still goes to stderr (with --write it says
		// what was written), then the error, exit 1.
		var outErr error
		for _, fr := range report.Files {
			if opts.Write && fr.Status == statusWriteFailed {
				// Standard output with --write is what was written:
				// nothing for this file (its report lists the changes
				// planned, and the JSON keeps their diff).
				continue
			}
			if _, err := io.WriteString(env.Out, printableDiffNames(fr.Diff, fr.File)); err != nil && outErr == nil {
				outErr = err
			}
		}
		printMigrateText(env.Err, env.ErrStyle, &report)
		if outErr != nil {
			return fail(fmt.Errorf("the diff could not be written to standard output: %w", outErr))
		}
	}
	switch {
	case unreadable:
		return &ExitError{Code: ExitUsage}
	case report.Failed || report.ChangesPending:
		return ErrFindings
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// migrateFile reads, migrates and (with --write) rewrites one file: one
// report, or one per lb-config of a Kubernetes manifest or Helm values
// file (manifest_migrate.go).
func migrateFile(env *Env, opts *migrateOptions, mo migrate.Options, name string) []migrateFileReport {
	fr := newMigrateFileReport(name)
	var orig *safewrite.Original
	var data []byte
	if name == "-" {
		b, err := readLimited(env.In, "standard input", validate.MaxInputBytes)
		if err != nil {
			return []migrateFileReport{unreadableReport(fr, err)}
		}
		data = b
	} else {
		o, err := safewrite.Read(name, validate.MaxInputBytes)
		if err != nil {
			return []migrateFileReport{unreadableReport(fr, err)}
		}
		orig, data = o, o.Data
	}
	opts.memLimit.raise(len(data), validate.DetectFormat(name, data))
	if es, ok, err := embeddedConfigs(data, opts.ValuesKey, opts.DataKey); ok {
		return migrateManifest(opts, mo, name, orig, data, es, err)
	}
	return []migrateFileReport{migrateData(opts, mo, name, orig, data)}
}

func newMigrateFileReport(name string) migrateFileReport {
	return migrateFileReport{File: name, Format: "unknown", Changes: []migrate.Change{}, Availability: []migrate.Availability{},
		Notes: []migrate.Note{}, Errors: []validateDiagnostic{}}
}

// migrateData migrates one lb-config file's bytes and (with --write)
// rewrites it.
func migrateData(opts *migrateOptions, mo migrate.Options, name string, orig *safewrite.Original, data []byte) migrateFileReport {
	fr, res := migrateText(mo, name, name, data)
	if res == nil || !res.Changed() {
		return fr
	}
	return writeMigrated(opts, fr, orig, res.Output)
}

// migrateText runs the migration of one lb-config text; as names the
// input for format detection. The report has no diff yet; res is nil when
// the migration could not run.
func migrateText(mo migrate.Options, name, as string, data []byte) (migrateFileReport, *migrate.Result) {
	fr := newMigrateFileReport(name)
	mo.DiffName = name // the diff is made inside, before the change list
	res, err := migrate.Migrate(as, data, mo)
	if err != nil { // options were checked before; keep the file untouched anyway
		return unreadableReport(fr, err), nil
	}
	fr.Format = res.Format.String()
	fr.Status = string(res.Status)
	if res.Changes != nil {
		fr.Changes = res.Changes // not copied: 93,000 changes are 20 MB
	}
	fr.Availability = append(fr.Availability, res.Availability...)
	fr.Notes = append(fr.Notes, res.Notes...)
	for _, d := range res.Errors {
		fr.Errors = append(fr.Errors, migrateDiag(d))
	}
	if res.Status == migrate.StatusUnreadable {
		fr.Format = "unknown"
		if res.Before != nil && len(res.Before.Diagnostics) > 0 && res.Before.Diagnostics[0].Code != validate.CodeRead {
			fr.Format = res.Format.String()
		}
	}
	if res.Changed() {
		fr.RequiresAffinityWaitStargate = res.RequiresAffinityWaitStargate
		fr.Diff = res.Diff
	}
	return fr, res
}

// writeMigrated writes out (with --write) and sets fr's status.
func writeMigrated(opts *migrateOptions, fr migrateFileReport, orig *safewrite.Original, out []byte) migrateFileReport {
	if !opts.Write {
		return fr
	}
	backup, err := safewrite.Replace(orig, out, safewrite.Options{Backup: opts.Backup, FS: opts.fs})
	fr.Backup = backup
	if err != nil {
		writeFailure(&fr, err)
		return fr
	}
	fr.Status = statusMigrated
	return fr
}

// writeFailure records a failed safewrite.Replace in fr: write_failed
// (the original is unchanged) or write_unconfirmed (the new content is in
// place but another process's edit was saved aside).
func writeFailure(fr *migrateFileReport, err error) {
	fr.Status = statusWriteFailed
	hint := "the original file is unchanged; fix the cause and run lcctl migrate again"
	if errors.Is(err, safewrite.ErrEditedDuringReplace) {
		fr.Status, hint = statusWriteUnconfirmed, "merge the saved version into the file and run lcctl migrate again; do not edit a file while migrate --write runs on it"
	}
	fr.Errors = append(fr.Errors, validateDiagnostic{Severity: "error", Message: err.Error(), Hint: hint})
}

// unreadableReport reports a file that could not be read, worded as
// lcctl validate words it (V1).
func unreadableReport(fr migrateFileReport, err error) migrateFileReport {
	fr.Status = string(migrate.StatusUnreadable)
	for _, d := range validate.ReadFailure(fr.File, err).Diagnostics {
		fr.Errors = append(fr.Errors, migrateDiag(d))
	}
	return fr
}

func migrateDiag(d validate.Diagnostic) validateDiagnostic {
	return validateDiagnostic{Severity: d.Severity.String(), Code: string(d.Code), Rule: d.Rule, Line: d.Line, Column: d.Col,
		Path: d.Path, Field: d.Field, Algorithm: d.Algorithm, Spelling: d.Spelling, Message: d.Message, Hint: d.Hint}
}

// printMigrateText writes the human report (stderr): per file its status,
// each change with its reason and what it loses, notes, availability
// changes and the version-safety warning.
func printMigrateText(w io.Writer, st *ui.Styles, report *migrateReport) {
	for i, fr := range report.Files {
		if i > 0 {
			fmt.Fprintln(w)
		}
		var status string
		switch fr.Status {
		case string(migrate.StatusUnchanged):
			status = st.OK.Render("nothing to migrate")
		case string(migrate.StatusPending):
			status = st.Warning.Render(plural.Count(len(fr.Changes), "change", "changes")+" pending") + st.Faint.Render(" (run with --write to apply)")
		case statusMigrated:
			status = st.OK.Render("migrated: " + plural.Count(len(fr.Changes), "change", "changes") + " written")
			if fr.Backup != "" {
				status += st.Faint.Render(" (original kept as " + fr.Backup + ")")
			}
		case string(migrate.StatusRefused):
			status = st.Error.Render("not migrated") + st.Faint.Render(" (nothing written)")
		case string(migrate.StatusInvalid):
			status = st.Error.Render("not migrated: the result would not pass validation") + st.Faint.Render(" (nothing written)")
		case string(migrate.StatusUnreadable):
			status = st.Error.Render("unreadable")
		case string(migrate.StatusNotLBConfig):
			status = st.Error.Render("not an lb-config") + st.Faint.Render(" (nothing written)")
		case statusWriteFailed:
			status = st.Error.Render("write failed") + st.Faint.Render(" (the original is unchanged)")
		case statusWriteUnconfirmed:
			status = st.Error.Render("written, but another process edited the file meanwhile") + st.Faint.Render(" (its version is saved aside)")
		}
		fmt.Fprintf(w, "%s %s %s\n", st.Header.Render(ui.Printable(fr.File)), st.Faint.Render("("+fr.Format+", --strategy "+report.Strategy+")"), status)
		if fr.Source != "" {
			fmt.Fprintf(w, "  %s %s\n", st.Faint.Render("in"), ui.Printable(fr.Source))
		}
		// Reasons and losses shared by several changes are printed once,
		// at their first change (the JSON output repeats them per change).
		said := map[string]bool{}
		for _, c := range fr.Changes {
			fmt.Fprintf(w, "  %s %s: %s\n", st.Bold.Render(c.Rule), st.Accent.Render(ui.Printable(c.Path)), ui.PrintableLines(changeSummary(c)))
			if !said[c.Reason] {
				said[c.Reason] = true
				fmt.Fprintf(w, "      %s %s\n", st.Faint.Render("why:"), c.Reason)
			}
			for _, l := range c.Lost {
				if !said[l] {
					said[l] = true
					fmt.Fprintf(w, "      %s %s\n", st.Warning.Render("loses:"), l)
				}
			}
		}
		for _, a := range fr.Availability {
			var parts []string
			if len(a.Added) > 0 {
				parts = append(parts, "now selectable: "+strings.Join(a.Added, ", "))
			}
			if len(a.Removed) > 0 {
				parts = append(parts, "no longer selectable (HTTP 400): "+strings.Join(a.Removed, ", "))
			}
			set := a.ConfigSet
			if set == lb.TopLevelDefault {
				set = "models without a models entry"
			}
			fmt.Fprintf(w, "  %s x-routing-method for %s: %s\n", st.Info.Render("availability"), set, strings.Join(parts, "; "))
		}
		for _, n := range fr.Notes {
			sev := string(n.Severity)
			switch n.Severity {
			case migrate.SeverityError:
				sev = st.Error.Render(fmt.Sprintf("%-7s", sev))
			case migrate.SeverityWarning:
				sev = st.Warning.Render(fmt.Sprintf("%-7s", sev))
			default:
				sev = st.Info.Render(fmt.Sprintf("%-7s", sev))
			}
			rule := n.Rule
			if rule != "" {
				rule = st.Bold.Render(rule) + " "
			}
			path := ""
			if n.Path != "" {
				path = st.Accent.Render(n.Path) + ": "
			}
			fmt.Fprintf(w, "  %s %s%s%s\n", sev, rule, ui.Printable(path), ui.PrintableLines(n.Message))
			if n.Hint != "" {
				fmt.Fprintf(w, "      %s %s\n", st.Faint.Render("hint:"), ui.PrintableLines(n.Hint))
			}
		}
		for _, e := range fr.Errors {
			loc := ui.Printable(fr.File)
			if e.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, e.Line)
				if e.Column > 0 {
					loc = fmt.Sprintf("%s:%d", loc, e.Column)
				}
			}
			code := e.Code
			if e.Rule != "" {
				code += " " + e.Rule
			}
			fmt.Fprintf(w, "  %s %s %s", st.Error.Render("error  "), st.Bold.Render(strings.TrimSpace(code)), loc)
			if e.Path != "" {
				fmt.Fprintf(w, " %s", st.Accent.Render(ui.Printable(e.Path)))
			}
			// Messages quote config values: escaped like every error
			// (writeProblem).
			fmt.Fprintf(w, "\n      %s\n", ui.PrintableLines(e.Message))
			if e.Hint != "" {
				fmt.Fprintf(w, "      %s %s\n", st.Faint.Render("hint:"), ui.PrintableLines(e.Hint))
			}
		}
		if fr.RequiresAffinityWaitStargate && (fr.Status == string(migrate.StatusPending) || fr.Status == statusMigrated) {
			fmt.Fprintf(w, "  %s %s\n", st.Warning.Render("version safety:"), versionSafetyText)
		}
	}
}

// versionSafetyText is the rollout warning for files that gain
// cache_affinity_wait_ms on pulsar-wait-and-widen (lb-config.md M5, open
// point 8; docs/rollout.md).
const versionSafetyText = "this file sets cache_affinity_wait_ms on pulsar-wait-and-widen, which Stargate releases older than the pulsar-wait-and-widen affinity wait (#2288) reject at startup (\"pulsar-wait-and-widen config does not support field(s): cache_affinity_wait_ms\"). Deploy it only to Stargate binaries that have that feature: upgrade Stargate in the same rollout as this config change, or first migrate with --strategy pulsar --no-preserve-header-method, which every release accepts ('lcctl docs rollout')."

// changeSummary is the one-line description of a change.
func changeSummary(c migrate.Change) string {
	fields := func(fs []migrate.Field) string {
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = f.Name + ": " + string(f.Value)
		}
		return strings.Join(parts, ", ")
	}
	switch c.Action {
	case "bound":
		s := "added " + fields(c.AddedFields)
		if len(c.Before) > 0 && c.Before[0] == '"' {
			s = "string entry becomes a detailed object; " + s
		}
		return s
	case "switch_to_pulsar":
		s := "pulsar-wait-and-widen → pulsar"
		if len(c.RemovedFields) > 0 {
			names := make([]string, len(c.RemovedFields))
			for i, f := range c.RemovedFields {
				names[i] = f.Name
			}
			s += "; removed " + strings.Join(names, ", ")
		}
		return s
	case "add_header_entry":
		return "new bounded pulsar-wait-and-widen entry " + string(c.After)
	case "switch_default":
		return "`default` pulsar-wait-and-widen → pulsar"
	case "pin_default_model":
		return "new bounded models entry " + string(c.After)
	}
	return c.Action
}

// dropSameFiles keeps the first of several names for one file (the same
// path twice, a directory and a file inside it, a symbolic link and its
// target) and notes the others on stderr. Migrating a file twice printed
// its diff twice, so `lcctl migrate … > change.patch` held a patch that
// patch(1) applies once and then offers to reverse.
func dropSameFiles(env *Env, files []string) []string {
	type seen struct {
		name string
		info os.FileInfo
	}
	var kept []seen
	out := files[:0:0]
	for _, f := range files {
		if f == "-" {
			out = append(out, f)
			continue
		}
		info, err := os.Stat(f)
		if err != nil { // unreadable: reported by the migration itself
			out = append(out, f)
			continue
		}
		dup := ""
		for _, k := range kept {
			if os.SameFile(k.info, info) {
				dup = k.name
				break
			}
		}
		if dup != "" {
			fmt.Fprintf(env.Err, "%s %s is the same file as %s: migrated once\n", env.ErrStyle.Info.Render("note:"), f, dup)
			continue
		}
		kept = append(kept, seen{f, info})
		out = append(out, f)
	}
	return out
}

// printableDiffNames escapes the file name in a unified diff's two header
// lines for the terminal (the JSON output keeps the exact name). The
// diffed content needs no escaping: JSON and YAML (yaml.v3) refuse raw
// control characters.
func printableDiffNames(diff, name string) string {
	safe := ui.Printable(name)
	if safe == name {
		return diff
	}
	diff = strings.Replace(diff, "--- "+name+"\n", "--- "+safe+"\n", 1)
	return strings.Replace(diff, "+++ "+name+"\n", "+++ "+safe+"\n", 1)
}
