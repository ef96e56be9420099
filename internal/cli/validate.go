package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/suggest"
	"github.com/lcctl/lcctl/internal/ui"
	"github.com/lcctl/lcctl/internal/validate"
)

// validateOptions are the flags of `lcctl validate`.
type validateOptions struct {
	// cmdInput's args are the FILE arguments.
	cmdInput
	// Strict makes warnings fail the run (exit 1).
	Strict bool
	// InputFormat is auto, json or yaml.
	InputFormat string
	// Quiet hides infos and files without findings.
	Quiet bool
	// FailOn lists diagnostic codes (LCnnnn) that fail the run (exit 1)
	// whatever their severity, as given on the command line.
	FailOn []string
	// failOn is FailOn checked against validate.Registry.
	failOn map[validate.Code]bool
	// DataKey keeps only the ConfigMap data entries with this key.
	DataKey string
	// ValuesKey is the key path of the lb-config in a Helm values file.
	ValuesKey string
	// format is InputFormat checked (FormatUnknown for auto), set by
	// validate.
	format validate.Format
}

// validate checks --fail-on, --input-format, --values-key and --data-key
// (validateValuesKeyFlags) and the FILE arguments (at most one "-", no
// empty one).
func (o *validateOptions) validate(*Env) error {
	if err := validateValuesKeyFlags(o.flagGiven, o.ValuesKey, o.DataKey); err != nil {
		return err
	}
	if o.flagGiven("fail-on") && len(o.FailOn) == 0 {
		// --fail-on "$CODES" with CODES unset would turn the
		// gate off without a word.
		return Usagef("--fail-on is empty (an unset variable?): give one or more codes, e.g. --fail-on LC2001")
	}
	if err := o.parseFailOn(); err != nil {
		return err
	}
	switch o.InputFormat {
	case "auto":
		o.format = validate.FormatUnknown
	case "json":
		o.format = validate.FormatJSON
	case "yaml":
		o.format = validate.FormatYAML
	default:
		return Usagef("invalid --input-format %q: want auto, json or yaml", o.InputFormat)
	}
	stdin := 0
	for _, a := range o.args {
		switch a {
		case "-":
			stdin++
		case "":
			// validate.File would take "" for standard input.
			return Usagef("empty FILE argument: give a file, a directory or - for standard input")
		}
	}
	if stdin > 1 {
		return Usagef("standard input (-) can be given only once")
	}
	return nil
}

// fails reports whether a file's findings fail the run: an error, a
// warning under --strict, or a code listed in --fail-on.
func (o *validateOptions) fails(fr validateFileReport) bool {
	return fr.Errors > 0 || (o.Strict && fr.Warnings > 0) || len(o.failedOn(fr)) > 0
}

// failedOn returns the --fail-on codes among fr's diagnostics, in order
// of first appearance.
func (o *validateOptions) failedOn(fr validateFileReport) []string {
	var codes []string
	for _, d := range fr.Diagnostics {
		if o.failOn[validate.Code(d.Code)] && !slices.Contains(codes, d.Code) {
			codes = append(codes, d.Code)
		}
	}
	return codes
}

// parseFailOn checks the --fail-on codes against the registry.
func (o *validateOptions) parseFailOn() error {
	known := make([]string, 0, len(validate.Registry))
	for _, c := range validate.Registry {
		known = append(known, string(c.Code))
	}
	o.failOn = map[validate.Code]bool{}
	for _, raw := range o.FailOn {
		c := strings.ToUpper(strings.TrimSpace(raw))
		if _, ok := validate.LookupCode(validate.Code(c)); !ok {
			return Usagef("--fail-on %q: not a diagnostic code (LCnnnn, 'lcctl docs diagnostics')%s", raw, suggest.DidYouMean(c, known))
		}
		o.failOn[validate.Code(c)] = true
	}
	return nil
}

func newValidateCommand(env *Env) *cobra.Command {
	opts := &validateOptions{InputFormat: "auto"}
	cmd := &cobra.Command{
		Use:   "validate [flags] FILE...",
		Short: "Check Stargate lb-config files the way Stargate does at startup",
		Long: `Validate Stargate load-balancer configs (the file given to --lb-config-path),
JSON or YAML. Every error Stargate would refuse to start on is reported, not
just the first, each with a stable code, file:line:col, the field path and the
algorithm; rollout warnings cover what changes at the last-cluster release.

A FILE of "-" is read from standard input; a directory is searched for
*.json, *.yaml and *.yml files. A search skips, and lists, the files that
are lcctl's other inputs (snapshots, scenarios, case files, gateway Helm
values); files you name are always checked. A Kubernetes manifest (a
ConfigMap, a List, a kubectl get -o yaml or helm template stream) is read
for the lb-configs in its ConfigMaps' data entries, and --values-key PATH
reads the one under a key of a Helm values file; positions are the
manifest's. 'lcctl explain-code CODE' explains a code; 'lcctl docs
diagnostics' lists them all.

--fail-on CODE,... also fails on the findings with those codes, whatever
their severity: --fail-on LC2001 checks that no no-SLO pulsar-wait-and-widen
entry is left after lcctl migrate, without failing on other warnings.

Exit codes: 0 no errors; 1 errors (or warnings with --strict, or a code
given to --fail-on); 2 usage error, or a file that cannot be read or is
not JSON/YAML.`,
		Example: `  lcctl validate lb-config.json
  lcctl validate --fail-on LC2001 lb-config.json     # after lcctl migrate: no no-SLO entry left
  lcctl validate --strict --output json configs/
  lcctl validate examples/*                          # the lb-configs among the examples
  kubectl get cm llm-request-router -o yaml | lcctl validate -
  helm template router ./chart | lcctl validate -
  lcctl validate --values-key router.lbConfig values-prod.yaml`,
		Args: needsArgs("an lb-config file or folder (or - for standard input)"),
	}
	wireLeaf(cmd, env, opts, runValidate)
	f := cmd.Flags()
	f.BoolVar(&opts.Strict, "strict", false, "fail (exit 1) on warnings too")
	f.StringVar(&opts.InputFormat, "input-format", "auto", "how to read the files: auto (by extension, then first byte), json or yaml")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "text output: hide infos and files without findings")
	f.StringSliceVar(&opts.FailOn, "fail-on", nil, "fail (exit 1) on findings with these codes too, whatever their severity (e.g. LC2001)")
	addValuesKeyFlag(f, &opts.ValuesKey, &opts.DataKey)
	_ = cmd.RegisterFlagCompletionFunc("input-format", cobra.FixedCompletions([]string{"auto", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// validateReport is the JSON output of `lcctl validate --output json`
// (schema lcctl.validate/v1, stamped by writeJSON; documented in
// docs/validate.md). Keys are never renamed or removed within a schema
// version.
type validateReport struct {
	// Files has one report per file, in argument order.
	Files []validateFileReport `json:"files"`
	// Skipped lists, in argument order, the files a directory search found
	// that are other lcctl inputs (snapshots, scenarios, case files,
	// gateway Helm values) and the directories without .json/.yaml/.yml
	// files; none of them is checked.
	Skipped []validateSkip `json:"skipped"`
	// Valid is true when no file has an error (or, with --strict, a
	// warning; with --fail-on, a finding with a listed code).
	Valid bool `json:"valid"`
	// Errors, Warnings and Infos are totals over all files.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
}

// validateFileReport is one file of a validateReport.
type validateFileReport struct {
	// File is the name as given ("-" for standard input).
	File string `json:"file"`
	// Format is json, yaml, or unknown when the file could not be read.
	Format string `json:"format"`
	// Readable is false when the file could not be read or decoded (exit 2).
	Readable bool `json:"readable"`
	// Valid is true when Stargate would start with the file.
	Valid bool `json:"valid"`
	// Errors, Warnings and Infos count the file's diagnostics.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
	// NoSLOEntries are the paths of no-SLO pulsar-wait-and-widen entries
	// (M1; candidates for lcctl migrate).
	NoSLOEntries []string `json:"no_slo_entries"`
	// Diagnostics are the findings, sorted by position.
	Diagnostics []validateDiagnostic `json:"diagnostics"`
	// LooksLike says which other lcctl input a file with errors appears
	// to be ("a routing snapshot (lcctl explain --snapshot)"); "" when it
	// is none of them.
	LooksLike string `json:"looks_like"`
	// Source is where the lb-config sits inside a Kubernetes manifest or
	// Helm values file (`ConfigMap ns/name data["lb-config.json"]`,
	// `values key router.lbConfig`); "" for an lb-config file. Lines and
	// columns are the manifest's.
	Source string `json:"source"`
}

// validateDiagnostic is one finding in a validateFileReport, the JSON form
// of validate.Diagnostic (see its field docs). Every key is always present;
// unknown numbers are 0 and absent strings "".
type validateDiagnostic struct {
	Severity  string `json:"severity"`
	Code      string `json:"code"`
	Rule      string `json:"rule"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	Path      string `json:"path"`
	Field     string `json:"field"`
	Algorithm string `json:"algorithm"`
	Spelling  string `json:"spelling"`
	Message   string `json:"message"`
	Hint      string `json:"hint"`
}

// runValidate checks the files of the validated options and reports.
func runValidate(_ context.Context, env *Env, opts *validateOptions) error {
	args, format := opts.args, opts.format
	exts := []string{".json", ".yaml", ".yml"}
	files, err := expandInputs(args, exts)
	if err != nil {
		return UsageErr(err)
	}
	report := validateReport{Valid: true, Files: []validateFileReport{}, Skipped: []validateSkip{}}
	results := make([]*validate.Result, 0, len(files))
	unreadable := 0
	for _, in := range files {
		name := in.Name
		if in.EmptyDir {
			report.Skipped = append(report.Skipped, validateSkip{File: name, Reason: "no .json/.yaml/.yml files below it"})
			continue
		}
		if in.Special != "" {
			report.Skipped = append(report.Skipped, validateSkip{File: name, Reason: in.Special})
			continue
		}
		var r *validate.Result
		looksLike, source := "", ""
		data, err := readInput(env, name, validate.MaxInputBytes)
		if err == nil {
			// A Kubernetes manifest or Helm values file: one report per
			// lb-config found in it (manifest.go).
			if es, ok, merr := embeddedConfigs(data, opts.ValuesKey, opts.DataKey); ok {
				var rs []*validate.Result
				var srcs []string
				for _, e := range es {
					rs, srcs = append(rs, validateEmbedded(name, e, format)), append(srcs, e.Source)
				}
				if merr != nil {
					rs, srcs = []*validate.Result{manifestFailure(name, merr, opts.ValuesKey != "")}, []string{""}
				}
				for i := range rs[:len(rs)-1] {
					unreadable += addValidateResult(&report, &results, opts, rs[i], "", srcs[i])
				}
				r, source = rs[len(rs)-1], srcs[len(rs)-1]
			}
		}
		switch {
		case r != nil:
		case err != nil:
			r = validate.ReadFailure(name, err)
		case in.FromDir && format == validate.FormatUnknown:
			// A directory search (lcctl validate examples/*) also finds
			// lcctl's own inputs; those are listed, not checked.
			if kind := otherInputKind(name, data); kind != "" {
				report.Skipped = append(report.Skipped, validateSkip{File: name, Reason: kind})
				continue
			}
			r = validate.FileAs(name, data, format)
		default:
			r = validate.FileAs(name, data, format)
			if r.Counts.Errors > 0 && !r.Unreadable() {
				// A named snapshot, scenario or values file fails as an
				// lb-config; say what it looks like instead.
				looksLike = otherInputKind(name, data)
			}
		}
		unreadable += addValidateResult(&report, &results, opts, r, looksLike, source)
	}
	if len(results) == 0 {
		// Only directories were given and none holds an lb-config.
		return Usagef("no lb-config to check: %s", describeSkipped(report.Skipped))
	}
	if env.Global.JSON() {
		if err := writeJSON(env.Out, "validate", report); err != nil {
			return err
		}
	} else {
		printValidateText(env.Out, env.Style, results, &report, opts)
	}
	switch {
	case unreadable > 0:
		return &ExitError{Code: ExitUsage, Err: unreadableError(unreadable, len(results))}
	case !report.Valid:
		return ErrFindings
	}
	return nil
}

// addValidateResult adds one checked lb-config to the report; it returns
// 1 when the input could not be read or decoded.
func addValidateResult(report *validateReport, results *[]*validate.Result, opts *validateOptions, r *validate.Result, looksLike, source string) int {
	*results = append(*results, r)
	fr := fileReport(r)
	fr.LooksLike, fr.Source = looksLike, source
	if opts.fails(fr) {
		report.Valid = false
	}
	report.Errors += fr.Errors
	report.Warnings += fr.Warnings
	report.Infos += fr.Infos
	report.Files = append(report.Files, fr)
	if !fr.Readable {
		return 1
	}
	return 0
}

func fileReport(r *validate.Result) validateFileReport {
	fr := validateFileReport{
		File: r.File, Format: r.Format.String(), Readable: !r.Unreadable(), Valid: r.Valid(),
		Errors: r.Counts.Errors, Warnings: r.Counts.Warnings, Infos: r.Counts.Infos,
		NoSLOEntries: []string{}, Diagnostics: []validateDiagnostic{},
	}
	if !fr.Readable {
		fr.Format = "unknown"
		if r.Doc != nil && r.Doc.Format != validate.FormatUnknown && len(r.Diagnostics) > 0 && r.Diagnostics[0].Code != validate.CodeRead {
			fr.Format = r.Doc.Format.String()
		}
	}
	for _, e := range r.NoSLO() {
		fr.NoSLOEntries = append(fr.NoSLOEntries, e.Path)
	}
	for _, d := range r.Diagnostics {
		fr.Diagnostics = append(fr.Diagnostics, validateDiagnostic{
			Severity: d.Severity.String(), Code: string(d.Code), Rule: d.Rule,
			Line: d.Line, Column: d.Col, Path: d.Path, Field: d.Field,
			Algorithm: d.Algorithm, Spelling: d.Spelling, Message: d.Message, Hint: d.Hint,
		})
	}
	return fr
}

// printValidateText renders results grouped per file.
func printValidateText(w io.Writer, st *ui.Styles, results []*validate.Result, report *validateReport, opts *validateOptions) {
	invalid, printed := 0, 0
	for i, r := range results {
		fr := report.Files[i]
		failed := opts.fails(fr) || !fr.Readable
		if failed {
			invalid++
		}
		// -q hides infos, except those that fail the run (--fail-on).
		hidden := func(d validate.Diagnostic) bool {
			return opts.Quiet && d.Severity == validate.SeverityInfo && !opts.failOn[d.Code]
		}
		shown := 0
		for _, d := range r.Diagnostics {
			if !hidden(d) {
				shown++
			}
		}
		if opts.Quiet && shown == 0 && !failed {
			continue
		}
		printed++
		var status string
		switch {
		case !fr.Readable:
			status = st.Error.Render("unreadable")
		case fr.Errors > 0:
			status = st.Error.Render("invalid")
		case opts.Strict && fr.Warnings > 0:
			status = st.Warning.Render("fails --strict")
		case len(opts.failedOn(fr)) > 0:
			status = st.Warning.Render("fails --fail-on " + strings.Join(opts.failedOn(fr), ","))
		default:
			status = st.OK.Render("valid")
		}
		counts := []string{plural.Count(fr.Errors, "error", "errors"), plural.Count(fr.Warnings, "warning", "warnings"), plural.Count(fr.Infos, "info", "infos")}
		fmt.Fprintf(w, "%s %s %s  %s\n", st.Header.Render(ui.Printable(r.File)), st.Faint.Render("("+fr.Format+")"), status, st.Faint.Render(strings.Join(counts, ", ")))
		if fr.Source != "" {
			fmt.Fprintf(w, "  %s %s\n", st.Faint.Render("in"), ui.Printable(fr.Source))
		}
		if fr.LooksLike != "" {
			fmt.Fprintf(w, "  %s this looks like %s, not an lb-config\n", st.Info.Render("note:"), fr.LooksLike)
		}
		for _, g := range groupFindings(r.Diagnostics, hidden) {
			d := g.first
			sev := d.Severity.String()
			switch d.Severity {
			case validate.SeverityError:
				sev = st.Error.Render(fmt.Sprintf("%-7s", sev))
			case validate.SeverityWarning:
				sev = st.Warning.Render(fmt.Sprintf("%-7s", sev))
			default:
				sev = st.Info.Render(fmt.Sprintf("%-7s", sev))
			}
			loc := ui.Printable(r.File)
			if d.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, d.Line)
				if d.Col > 0 {
					loc = fmt.Sprintf("%s:%d", loc, d.Col)
				}
			}
			rule := string(d.Code)
			if d.Rule != "" {
				rule += " " + d.Rule
			}
			fmt.Fprintf(w, "  %s %s %s", sev, st.Bold.Render(rule), loc)
			if d.Path != "" {
				fmt.Fprintf(w, " %s", st.Accent.Render(ui.Printable(g.pathList())))
			}
			if len(g.paths) > 3 {
				fmt.Fprintf(w, " %s", st.Faint.Render(fmt.Sprintf("(%d entries; -o json lists each with its position)", len(g.paths))))
			}
			fmt.Fprintf(w, "\n      %s\n", ui.Printable(d.Message))
			if d.Hint != "" {
				fmt.Fprintf(w, "      %s %s\n", st.Faint.Render("hint:"), ui.Printable(d.Hint))
			}
		}
	}
	if len(report.Skipped) > 0 && !opts.Quiet {
		printed++
		fmt.Fprintf(w, "\n%s\n", st.Faint.Render("skipped, not lb-configs:"))
		width := 0
		for _, s := range report.Skipped {
			width = max(width, lipgloss.Width(ui.Printable(s.File)))
		}
		for _, s := range report.Skipped {
			name := ui.Printable(s.File)
			fmt.Fprintf(w, "  %s%s  %s\n", name, strings.Repeat(" ", width-lipgloss.Width(name)), st.Faint.Render(s.Reason))
		}
	}
	if len(results) > 1 || len(report.Skipped) > 0 {
		skipped := ""
		if len(report.Skipped) > 0 {
			skipped = fmt.Sprintf("; %d skipped", len(report.Skipped))
		}
		if printed > 0 {
			// A blank line separates the summary from what was printed.
			fmt.Fprintln(w)
		}
		what := plural.Count(len(results), "file", "files")
		files, embedded := map[string]bool{}, false
		for _, fr := range report.Files {
			files[fr.File] = true
			embedded = embedded || fr.Source != ""
		}
		if embedded {
			// Manifests hold several lb-configs: count both.
			what = plural.Count(len(results), "lb-config", "lb-configs") + " in " + plural.Count(len(files), "file", "files")
		}
		fmt.Fprintf(w, "%s checked: %d failed; %s, %s, %s%s\n", what, invalid,
			plural.Count(report.Errors, "error", "errors"), plural.Count(report.Warnings, "warning", "warnings"), plural.Count(report.Infos, "info", "infos"), skipped)
	}
}

// describeSkipped says what was skipped, for the error when nothing is
// left to check: the first three entries and how many more.
func describeSkipped(skipped []validateSkip) string {
	var parts []string
	show := plural.Shown(len(skipped), 3)
	for i, s := range skipped {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more skipped", len(skipped)-show))
			break
		}
		parts = append(parts, ui.Printable(s.File)+": "+s.Reason)
	}
	return strings.Join(parts, "; ")
}

// unreadableError is the exit-2 summary when files could not be read:
// "the file could not be read" for a single file, "2 of 5 files could not
// be read" otherwise.
func unreadableError(unreadable, total int) error {
	const see = " (missing, unreadable, or not JSON/YAML: see the LC1000/LC1001/LC11xx findings)"
	switch {
	case total == 1:
		return errors.New("the file could not be read" + see)
	case unreadable == total:
		return fmt.Errorf("none of the %d files could be read"+see, total)
	}
	return fmt.Errorf("%d of %d files could not be read"+see, unreadable, total)
}
