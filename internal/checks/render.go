package checks

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/ui"
)

// Markers printed before each result in text output.
const (
	MarkOK   = "✔"
	MarkFail = "✖"
	MarkWarn = "‼"
	MarkSkip = "○"
)

// Marker returns the text marker for s.
func Marker(s Status) string {
	switch s {
	case StatusOK:
		return MarkOK
	case StatusFail:
		return MarkFail
	case StatusWarn:
		return MarkWarn
	default:
		return MarkSkip
	}
}

// MaxTextResults is how many results of one check and one status that
// name a subject (a model) RenderText prints one by one in a group. Above
// it (a Stargate serving thousands of models) the group is printed check
// by check, failures first: the first MaxTextResults failures and warnings
// of a check are printed in full and the rest folded into one line; passed
// and skipped results of such a check are folded into one line each. A
// folded line counts the results, names the first subjects and says that
// -o json lists every result; the JSON form is never folded.
const MaxTextResults = 20

// foldedSubjects is how many subjects a folded line names.
const foldedSubjects = 3

// RenderText writes the report as a grouped checklist: each non-empty group
// as a heading underlined with dashes, each result as "<marker> <title>",
// followed by indented reason, detail and "hint:" lines, and a final status
// line with the counts (of every result, folded ones included; see
// MaxTextResults). styles may be nil (plain text). Output is buffered and
// flushed before it returns. It returns the first write error.
func RenderText(w io.Writer, st *ui.Styles, r *Report) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	ew := &errWriter{w: bw}
	style := func(s Status, text string) string {
		if st == nil {
			return text
		}
		switch s {
		case StatusOK:
			return st.OK.Render(text)
		case StatusFail:
			return st.Error.Render(text)
		case StatusWarn:
			return st.Warning.Render(text)
		default:
			return st.Faint.Render(text)
		}
	}
	header := func(text string) string {
		if st == nil {
			return text
		}
		return st.Bold.Render(text)
	}
	faint := func(text string) string {
		if st == nil {
			return text
		}
		return st.Faint.Render(text)
	}
	printResult := func(res Result, reason string, details []string, hint string) {
		// Titles, reasons and details carry scraped label values
		// and file content: no control characters to the terminal.
		ew.printf("%s %s\n", style(res.Status, Marker(res.Status)), ui.Printable(res.Title))
		if reason != "" {
			prefix := "    "
			if res.Status == StatusSkip {
				prefix = "    skipped: "
			}
			ew.printf("%s\n", faintIf(res.Status == StatusSkip, faint, prefix+ui.Printable(reason)))
		}
		for _, d := range details {
			ew.printf("    %s\n", ui.Printable(d))
		}
		if hint != "" && (res.Status == StatusFail || res.Status == StatusWarn) {
			ew.printf("    %s %s\n", style(res.Status, "hint:"), ui.Printable(hint))
		}
	}
	first := true
	for _, g := range r.Groups {
		if len(g.Checks) == 0 {
			continue
		}
		if !first {
			ew.printf("\n")
		}
		first = false
		ew.printf("%s\n%s\n", header(g.Name), strings.Repeat("-", len([]rune(g.Name))))
		for _, it := range textItems(g.Checks) {
			if it.folded == nil {
				printResult(it.res, it.res.Reason, it.res.Details, it.res.Hint)
				continue
			}
			printResult(foldedLine(it.folded, it.shown))
		}
	}
	s := r.Summary()
	overall := StatusOK
	switch {
	case s.Fail > 0:
		overall = StatusFail
	case s.Warn > 0:
		overall = StatusWarn
	}
	if !first {
		ew.printf("\n")
	}
	ew.printf("Status check results are %s (%d ok, %d failed, %s, %d skipped)\n",
		style(overall, Marker(overall)), s.OK, s.Fail, plural.Count(s.Warn, "warning", "warnings"), s.Skip)
	if ew.err == nil {
		ew.err = bw.Flush()
	}
	return ew.err
}

// textItem is one entry of a group's text form: a result, or (folded
// non-nil) several results of one check and status printed as one line,
// shown being how many of that check and status were printed before it.
type textItem struct {
	res    Result
	folded []Result
	shown  int
}

// textItems orders and folds a group's results for RenderText (see
// MaxTextResults). A group in which no check has more than MaxTextResults
// results of one status with a subject is returned as it is, in run order.
func textItems(rs []Result) []textItem {
	type bucket struct {
		id     string
		status Status
	}
	counts := map[bucket]int{}
	fold := false
	for _, res := range rs {
		if res.Subject == "" {
			continue
		}
		b := bucket{res.ID, res.Status}
		counts[b]++
		fold = fold || counts[b] > MaxTextResults
	}
	items := make([]textItem, 0, min(len(rs), 64))
	if !fold {
		for _, res := range rs {
			items = append(items, textItem{res: res})
		}
		return items
	}
	var ids []string
	byID := map[string][]Result{}
	for _, res := range rs {
		if _, ok := byID[res.ID]; !ok {
			ids = append(ids, res.ID)
		}
		byID[res.ID] = append(byID[res.ID], res)
	}
	for _, id := range ids {
		for _, status := range []Status{StatusFail, StatusWarn, StatusOK, StatusSkip} {
			many := counts[bucket{id, status}] > MaxTextResults
			shown := 0
			var folded []Result
			for _, res := range byID[id] {
				switch {
				case res.Status != status:
				case res.Subject == "" || !many:
					items = append(items, textItem{res: res})
				case (status == StatusFail || status == StatusWarn) && shown < MaxTextResults:
					items = append(items, textItem{res: res})
					shown++
				default:
					folded = append(folded, res)
				}
			}
			if len(folded) > 0 {
				items = append(items, textItem{folded: folded, shown: shown})
			}
		}
	}
	return items
}

// foldedLine returns the result RenderText prints for folded results of
// one check and status (shown of them printed before), with its reason,
// details and hint lines: a reason or hint shared by every folded result
// is kept, the others are left to -o json.
func foldedLine(rs []Result, shown int) (Result, string, []string, string) {
	head := rs[0]
	title := strings.TrimSuffix(head.Title, " ["+head.Subject+"]")
	names := make([]string, 0, foldedSubjects+1)
	for _, res := range rs[:min(len(rs), foldedSubjects)] {
		names = append(names, res.Subject)
	}
	if len(rs) > foldedSubjects {
		names = append(names, "…")
	}
	more := ""
	if shown > 0 {
		more = "more "
	}
	head.Title = fmt.Sprintf("%s [%d %smodels: %s]", title, len(rs), more, strings.Join(names, ", "))
	reason, hint := head.Reason, head.Hint
	for _, res := range rs[1:] {
		if res.Reason != reason {
			reason = ""
		}
		if res.Hint != hint {
			hint = ""
		}
	}
	if reason != "" {
		reason += fmt.Sprintf(" (all %d)", len(rs))
	}
	what := map[Status]string{StatusOK: "passed", StatusFail: "failed", StatusWarn: "warned", StatusSkip: "skipped"}[head.Status]
	note := fmt.Sprintf("%d %s results of this check folded into one line", len(rs), what)
	if shown > 0 {
		note += fmt.Sprintf(" (%d shown above)", shown)
	}
	note += "; -o json lists every result with its reason"
	return head, reason, []string{note}, hint
}

func faintIf(cond bool, faint func(string) string, s string) string {
	if cond {
		return faint(s)
	}
	return s
}

// JSONSchema is the value of the "schema" field of checklist JSON output.
const JSONSchema = "lcctl.checks/v1"

// JSONReport is the JSON form of a checklist (docs/preflight.md). Fields
// added later are optional; existing ones keep their meaning.
type JSONReport struct {
	// Schema is JSONSchema.
	Schema string `json:"schema"`
	// Command is the lcctl command that produced the report ("preflight",
	// "check metrics").
	Command string `json:"command"`
	// Stage is the rollout stage checked (1–3), 0 when not applicable.
	Stage int `json:"stage,omitempty"`
	// Success is false when any check failed (or warned under --strict).
	Success bool `json:"success"`
	// Strict reports whether warnings counted as failures.
	Strict bool `json:"strict"`
	// Summary counts results by status.
	Summary Summary `json:"summary"`
	// Groups holds every group, including empty ones, in display order.
	Groups []*Group `json:"groups"`
}

// ToJSON builds the JSON form of r.
func ToJSON(r *Report, command string, stage int, strict bool) JSONReport {
	groups := r.Groups
	if groups == nil {
		groups = []*Group{}
	}
	for _, g := range groups {
		if g.Checks == nil {
			g.Checks = []Result{}
		}
	}
	return JSONReport{
		Schema:  JSONSchema,
		Command: command,
		Stage:   stage,
		Success: !r.Failed(strict),
		Strict:  strict,
		Summary: r.Summary(),
		Groups:  groups,
	}
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}
