package checks

import (
	"bufio"
	"fmt"
	"io"
	"slices"
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
				res := g.Checks[it.res]
				printResult(res, res.Reason, res.Details, res.Hint)
				continue
			}
			printResult(foldedLine(g.Checks, it.folded, it.shown))
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

// textItem is one entry of a group's text form: the result at index res,
// or (folded non-nil) the results at those indices, of one check and
// status, printed as one line, shown being how many of that check and
// status were printed before it.
type textItem struct {
	res    int
	folded []int
	shown  int
}

// textItems orders and folds a group's results for RenderText (see
// MaxTextResults). A group in which no check has more than MaxTextResults
// results of one status with a subject is returned as it is, in run order.
func textItems(rs []Result) []textItem {
	// A group has a handful of check ids: a slice, searched linearly, is
	// cheaper than a map for 400,000 results.
	type bucket struct {
		id     string
		status Status
		n      int
	}
	var buckets []bucket
	var ids []string
	fold := false
	for i := range rs {
		res := &rs[i]
		if !slices.Contains(ids, res.ID) {
			ids = append(ids, res.ID)
		}
		if res.Subject == "" {
			continue
		}
		j := slices.IndexFunc(buckets, func(b bucket) bool { return b.id == res.ID && b.status == res.Status })
		if j < 0 {
			buckets = append(buckets, bucket{id: res.ID, status: res.Status})
			j = len(buckets) - 1
		}
		buckets[j].n++
		fold = fold || buckets[j].n > MaxTextResults
	}
	if !fold {
		items := make([]textItem, len(rs))
		for i := range rs {
			items[i] = textItem{res: i}
		}
		return items
	}
	var items []textItem
	for _, id := range ids {
		for _, status := range []Status{StatusFail, StatusWarn, StatusOK, StatusSkip} {
			many := slices.ContainsFunc(buckets, func(b bucket) bool { return b.id == id && b.status == status && b.n > MaxTextResults })
			shown := 0
			var folded []int
			for i := range rs {
				res := &rs[i]
				switch {
				case res.Status != status || res.ID != id:
				case res.Subject == "" || !many:
					items = append(items, textItem{res: i})
				case (status == StatusFail || status == StatusWarn) && shown < MaxTextResults:
					items = append(items, textItem{res: i})
					shown++
				default:
					folded = append(folded, i)
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
// is kept, the others are left to -o json. Subjects are models (the only
// per-subject checks are Stargate's per-model ones, Result.Subject), so
// the title counts models.
func foldedLine(all []Result, folded []int, shown int) (Result, string, []string, string) {
	head := all[folded[0]]
	title := strings.TrimSuffix(head.Title, " ["+ui.EchoLabel(head.Subject)+"]")
	names := make([]string, 0, foldedSubjects+1)
	for _, i := range folded[:min(len(folded), foldedSubjects)] {
		names = append(names, ui.EchoLabel(all[i].Subject))
	}
	if len(folded) > foldedSubjects {
		names = append(names, "…")
	}
	more := ""
	if shown > 0 {
		more = "more "
	}
	head.Title = fmt.Sprintf("%s [%d %smodels: %s]", title, len(folded), more, strings.Join(names, ", "))
	reason, hint := head.Reason, head.Hint
	for _, i := range folded[1:] {
		if all[i].Reason != reason {
			reason = ""
		}
		if all[i].Hint != hint {
			hint = ""
		}
	}
	if reason != "" {
		reason += fmt.Sprintf(" (all %d)", len(folded))
	}
	what := map[Status]string{StatusOK: "passed", StatusFail: "failed", StatusWarn: "warned", StatusSkip: "skipped"}[head.Status]
	note := fmt.Sprintf("%d %s results of this check folded into one line", len(folded), what)
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
