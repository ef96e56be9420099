package checks

import (
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

// RenderText writes the report as a grouped checklist: each non-empty group
// as a heading underlined with dashes, each result as "<marker> <title>",
// followed by indented reason, detail and "hint:" lines, and a final status
// line with the counts. styles may be nil (plain text). It returns the
// first write error.
func RenderText(w io.Writer, st *ui.Styles, r *Report) error {
	ew := &errWriter{w: w}
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
		for _, res := range g.Checks {
			// Titles, reasons and details carry scraped label values
			// and file content: no control characters to the terminal.
			ew.printf("%s %s\n", style(res.Status, Marker(res.Status)), ui.Printable(res.Title))
			if res.Reason != "" {
				prefix := "    "
				if res.Status == StatusSkip {
					prefix = "    skipped: "
				}
				ew.printf("%s\n", faintIf(res.Status == StatusSkip, faint, prefix+ui.Printable(res.Reason)))
			}
			for _, d := range res.Details {
				ew.printf("    %s\n", ui.Printable(d))
			}
			if res.Hint != "" && (res.Status == StatusFail || res.Status == StatusWarn) {
				ew.printf("    %s %s\n", style(res.Status, "hint:"), ui.Printable(res.Hint))
			}
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
	return ew.err
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
