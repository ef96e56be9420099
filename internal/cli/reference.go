package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/spf13/cobra"

	lcctlfiles "github.com/lcctl/lcctl"
	"github.com/lcctl/lcctl/internal/suggest"
	"github.com/lcctl/lcctl/internal/ui"
	"github.com/lcctl/lcctl/internal/validate"
)

// codePattern matches a diagnostic code as typed (LC2001, lc2001).
var codePattern = regexp.MustCompile(`(?i)^lc[0-9]{4}$`)

// explainCodeReport is the JSON output of `lcctl explain-code CODE`
// (docs/cli.md): the registry row of the code and what lcctl validate
// reports for its example.
type explainCodeReport struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	// Rule is the lb-config.md rule ("V13", "W1"), "" for lcctl-only codes.
	Rule    string `json:"rule"`
	Title   string `json:"title"`
	Meaning string `json:"meaning"`
	// Example is a small lb-config that triggers the code, or the
	// command that does (LC1000).
	Example string `json:"example"`
	// Message and Hint are lcctl validate's message and fix for the
	// example, "" when the example is a command.
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// explainCodeOptions are the argument of `lcctl explain-code CODE` and of
// `lcctl help CODE`: args[0] is the code as typed (LC2001, lc2001).
type explainCodeOptions struct {
	cmdInput
	// rep is the code's report, set by validate.
	rep explainCodeReport
}

func newExplainCodeCommand(env *Env) *cobra.Command {
	return wireLeaf(&cobra.Command{
		Use:   "explain-code CODE",
		Short: "Explain a diagnostic code (LCnnnn): what it means, an example and the fix",
		Long: `Print the full text of a diagnostic code reported by lcctl validate,
migrate, explain and preflight: its severity, the Stargate rule it
reproduces, when it is reported and why it matters, a small lb-config that
triggers it, and the message and hint lcctl validate gives for that example.
'lcctl help CODE' does the same; 'lcctl docs diagnostics' lists every code.

Exit codes: 0 explained; 2 not a known code.`,
		Example: `  lcctl explain-code LC2001
  lcctl help LC1018
  lcctl explain-code lc3013 -o json`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			var codes []string
			for _, c := range validate.Registry {
				codes = append(codes, string(c.Code)+"\t"+c.Title)
			}
			return codes, cobra.ShellCompDirectiveNoFileComp
		},
	}, env, &explainCodeOptions{}, runExplainCode)
}

// codeReport builds the report of one registered code; ok is false for
// an unknown one.
func codeReport(raw string) (explainCodeReport, bool) {
	info, ok := validate.LookupCode(validate.Code(strings.ToUpper(strings.TrimSpace(raw))))
	if !ok {
		return explainCodeReport{}, false
	}
	rep := explainCodeReport{Code: string(info.Code), Severity: info.Severity.String(), Rule: info.Rule,
		Title: info.Title, Meaning: info.Meaning, Example: info.Example}
	if !strings.HasPrefix(info.Example, "lcctl ") {
		// The fix is what lcctl validate itself says about the example.
		r := validate.File("example.json", []byte(info.Example))
		for _, d := range r.Diagnostics {
			if d.Code == info.Code {
				rep.Message, rep.Hint = d.Message, d.Hint
				break
			}
		}
	}
	return rep, true
}

// validate looks the code up; an unknown one is a usage error.
func (o *explainCodeOptions) validate(*Env) error {
	if len(o.args) != 1 {
		return Usagef("explain-code takes one diagnostic code, e.g. LC2001")
	}
	raw := o.args[0]
	rep, ok := codeReport(raw)
	if !ok {
		known := make([]string, 0, len(validate.Registry))
		for _, c := range validate.Registry {
			known = append(known, string(c.Code))
		}
		return Usagef("%q is not a diagnostic code lcctl reports%s; 'lcctl docs diagnostics' lists them", raw, suggest.DidYouMean(strings.ToUpper(raw), known))
	}
	o.rep = rep
	return nil
}

// runExplainCode prints the validated code's report.
func runExplainCode(_ context.Context, env *Env, o *explainCodeOptions) error {
	rep := o.rep
	if env.Global.JSON() {
		return writeJSON(env.Out, "explain-code", rep)
	}
	st := env.Style
	rule := ""
	if rep.Rule != "" {
		rule = " (rule " + rep.Rule + ")"
	}
	w := env.Out
	fmt.Fprintf(w, "%s %s%s: %s\n\n", st.Header.Render(rep.Code), rep.Severity, rule, st.Bold.Render(rep.Title))
	fmt.Fprintln(w, wrapText(rep.Meaning, 76, ""))
	fmt.Fprintf(w, "\n%s\n", st.Bold.Render("Example:"))
	fmt.Fprintf(w, "  %s\n", rep.Example)
	if rep.Message != "" {
		fmt.Fprintf(w, "\n%s\n", st.Bold.Render("lcctl validate says:"))
		fmt.Fprintln(w, wrapText(rep.Message, 76, "  "))
	}
	if rep.Hint != "" {
		fmt.Fprintf(w, "\n%s\n", st.Bold.Render("Fix:"))
		fmt.Fprintln(w, wrapText(rep.Hint, 76, "  "))
	}
	return nil
}

// wrapText wraps s at width terminal columns (ui.Wrap), each line
// starting with indent.
func wrapText(s string, width int, indent string) string {
	lines := ui.Wrap(s, width-len(indent))
	for i, l := range lines {
		lines[i] = indent + l
	}
	if len(lines) == 0 {
		return indent
	}
	return strings.Join(lines, "\n")
}

// docTopic is one embedded document.
type docTopic struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	path  string
}

// docTopics lists the embedded docs: each docs/NAME.md is topic NAME,
// docs/README.md (the index) is "index".
func docTopics() []docTopic {
	entries, _ := fs.ReadDir(lcctlfiles.Docs, "docs")
	var out []docTopic
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".md")
		p := path.Join("docs", e.Name())
		if name == "README" {
			name = "index"
		}
		title := name
		if data, err := fs.ReadFile(lcctlfiles.Docs, p); err == nil {
			for _, l := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(l, "# ") {
					title = strings.TrimPrefix(l, "# ")
					break
				}
			}
		}
		out = append(out, docTopic{Name: name, Title: title, path: p})
	}
	return out
}

// docsReport is the JSON output of `lcctl docs`: the topics, or one
// topic's Markdown source.
type docsReport struct {
	Topics   []docTopic `json:"topics,omitempty"`
	Topic    string     `json:"topic,omitempty"`
	Markdown string     `json:"markdown,omitempty"`
}

// docsOptions are the argument of `lcctl docs [TOPIC]`.
type docsOptions struct {
	cmdInput
	// topics are the embedded documents and topic the one args[0]
	// names (nil: list the topics), both set by validate.
	topics []docTopic
	topic  *docTopic
}

func newDocsCommand(env *Env) *cobra.Command {
	return wireLeaf(&cobra.Command{
		Use:   "docs [TOPIC]",
		Short: "Read lcctl's reference documentation (built into the binary)",
		Long: `Print one of lcctl's reference documents, built into the binary, so that
an installed lcctl carries its own manual. Without TOPIC, list the topics.

On a terminal the Markdown is rendered (headings, tables, code); piped, or
with NO_COLOR or --no-color, the Markdown source is printed as it is, for
grep or a pager. -o json gives the topics, or the topic's Markdown.

Exit codes: 0 printed; 2 unknown topic.`,
		Example: `  lcctl docs
  lcctl docs rollout
  lcctl docs validate | less
  lcctl docs diagnostics | grep LC2001`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, t := range docTopics() {
				names = append(names, t.Name+"\t"+t.Title)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}, env, &docsOptions{}, runDocs)
}

// validate finds the topic args[0] names ("docs/NAME.md", "NAME.md",
// "readme" and any case name the same topic); an unknown one is a usage
// error.
func (o *docsOptions) validate(*Env) error {
	o.topics, o.topic = docTopics(), nil
	if len(o.args) == 0 {
		return nil
	}
	topics := o.topics
	want := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(o.args[0], "docs/"), ".md"))
	if want == "readme" {
		want = "index"
	}
	i := slices.IndexFunc(topics, func(t docTopic) bool { return t.Name == want })
	if i < 0 {
		names := make([]string, len(topics))
		for j, t := range topics {
			names[j] = t.Name
		}
		return Usagef("no documentation topic %q%s; topics: %s", o.args[0], suggest.DidYouMean(want, names), strings.Join(names, ", "))
	}
	o.topic = &topics[i]
	return nil
}

// runDocs lists the topics or prints the validated one.
func runDocs(_ context.Context, env *Env, o *docsOptions) error {
	topics := o.topics
	if o.topic == nil {
		if env.Global.JSON() {
			return writeJSON(env.Out, "docs", docsReport{Topics: topics})
		}
		fmt.Fprintln(env.Out, "Topics (lcctl docs TOPIC):")
		width := 0
		for _, t := range topics {
			width = max(width, len(t.Name))
		}
		for _, t := range topics {
			fmt.Fprintf(env.Out, "  %-*s  %s\n", width, t.Name, t.Title)
		}
		return nil
	}
	data, err := fs.ReadFile(lcctlfiles.Docs, o.topic.path)
	if err != nil {
		return err
	}
	if env.Global.JSON() {
		return writeJSON(env.Out, "docs", docsReport{Topic: o.topic.Name, Markdown: string(data)})
	}
	if !env.Style.Color {
		_, err := env.Out.Write(data)
		return err
	}
	return renderMarkdown(env.Out, data, docsWidth(env))
}

// renderMarkdown renders Markdown for a colour terminal with glamour.
func renderMarkdown(w io.Writer, md []byte, width int) error {
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle("dark"), glamour.WithWordWrap(width))
	if err != nil {
		return err
	}
	out, err := r.RenderBytes(md)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// docsWidth is the terminal's width (Streams.Width: the terminal's, else
// $COLUMNS; 80 when unknown or under 21), at most 120.
func docsWidth(env *Env) int {
	if w := env.Width(); w > 20 {
		return min(w, 120)
	}
	return 80
}

// helpOptions are the arguments of `lcctl help [COMMAND...]` and
// `lcctl help CODE`.
type helpOptions struct {
	cmdInput
	// Set by validate: code for `help LCnnnn`, else target, the command
	// whose help is printed.
	code   *explainCodeOptions
	target *cobra.Command
}

// validate resolves the topic: a diagnostic code (explained as by
// explain-code), else a command path; an unknown command is a usage error
// with "did you mean" (unknownSubcommand), not cobra's help of the root.
func (o *helpOptions) validate(env *Env) error {
	o.code, o.target = nil, nil
	if len(o.args) == 1 && codePattern.MatchString(o.args[0]) {
		o.code = &explainCodeOptions{cmdInput: cmdInput{args: o.args}}
		return o.code.validate(env)
	}
	target, rest, err := o.root.Find(o.args)
	if err != nil || len(rest) > 0 {
		return unknownSubcommand(target, rest)
	}
	o.target = target
	return nil
}

// runHelp prints the validated topic.
func runHelp(ctx context.Context, env *Env, o *helpOptions) error {
	if o.code != nil {
		return runExplainCode(ctx, env, o.code)
	}
	return o.target.Help()
}

// wireHelp gives cobra's help command the steps of a leaf command
// (helpOptions): `lcctl help LC2001` explains the code, as
// `lcctl explain-code LC2001` does, and an unknown topic is a usage error.
func wireHelp(root *cobra.Command, env *Env) {
	for _, c := range root.Commands() {
		if c.Name() != "help" || !c.Runnable() {
			continue
		}
		c.Run = nil
		wireLeaf(c, env, &helpOptions{}, runHelp)
		c.Example += "\n  lcctl help LC2001          # a diagnostic code, as lcctl explain-code LC2001"
	}
}

// versionTemplate is what `lcctl --version` prints: the first lines of
// `lcctl version`.
func versionTemplate() string {
	v := versionInfo()
	text := fmt.Sprintf("lcctl %s\ncommit: %s\n", v.Version, v.Commit)
	var doc bytes.Buffer
	if err := writeJSON(&doc, "version", v); err != nil {
		return text
	}
	// --version -o json prints the document `lcctl version -o json`
	// prints; both texts are Go-quoted so no byte is read as template.
	return fmt.Sprintf(`{{if eq (.Flag "output").Value.String %q}}{{print %s}}{{else}}{{print %s}}{{end}}`,
		OutputJSON, strconv.Quote(doc.String()), strconv.Quote(text))
}
