package ui

import (
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"
)

// Table is the one table renderer of lcctl's text output (explain,
// simulate, check metrics, store scan and stats). Cells are measured in
// terminal columns (charmbracelet/x/ansi: wide characters count two,
// escape sequences none), so columns stay aligned with CJK or emoji
// names. It renders through lipgloss/table.
type Table struct {
	// Headers are the column titles; Rows the cells, one slice per row
	// (a row shorter than Headers is padded with empty cells).
	Headers []string
	Rows    [][]string
	// Right marks the columns whose cells are right-aligned (numbers);
	// the others are left-aligned.
	Right map[int]bool
	// MinWidth gives columns a minimum width in terminal columns (fixed
	// layouts such as store stats' "%8s" numbers).
	MinWidth map[int]int
	// Rule draws a line under the header and puts one space of padding
	// on both sides of every cell (explain's layout); without it columns
	// are separated by two spaces and lines have no trailing blanks.
	Rule bool
	// Width fits the table to at most this many columns, wrapping cells
	// (0: no limit). Only used with Rule.
	Width int
	// Indent is written before every line.
	Indent string
	// RowStyle styles whole rows when colour is on (nil, or a zero
	// Style, leaves a row as it is).
	RowStyle func(row int) lipgloss.Style
}

// Render returns the table as lines ending in "\n", styled with st (the
// header bold when colour is on; nil st is plain text).
func (t Table) Render(st *Styles) string {
	if st == nil {
		st = NewStyles(io.Discard, false)
	}
	r := st.Renderer()
	headers := append([]string{}, t.Headers...)
	for col, w := range t.MinWidth {
		if col < len(headers) {
			if n := w - Width(headers[col]); n > 0 {
				if t.Right[col] {
					headers[col] = strings.Repeat(" ", n) + headers[col]
				} else {
					headers[col] += strings.Repeat(" ", n)
				}
			}
		}
	}
	if !t.Rule && len(t.Rows) > plainTableRows && (t.RowStyle == nil || !st.Color) {
		return t.renderPlain(st, headers)
	}
	pad := func(s lipgloss.Style) lipgloss.Style { return s.Padding(0, 1) }
	cell := pad(r.NewStyle())
	head := pad(r.NewStyle().Bold(st.Color))
	rows := make([][]string, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = row
		if len(row) < len(t.Headers) {
			rows[i] = append(append([]string{}, row...), make([]string, len(t.Headers)-len(row))...)
		}
	}
	lt := table.New().
		Border(lipgloss.NormalBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderColumn(false).BorderRow(false).BorderHeader(t.Rule).
		BorderStyle(r.NewStyle()).
		Headers(headers...).Rows(rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			s := cell
			if row == table.HeaderRow {
				s = head
			} else if t.RowStyle != nil && st.Color {
				if rs := t.RowStyle(row); rs.GetForeground() != (lipgloss.NoColor{}) || rs.GetBold() {
					s = pad(rs)
				}
			}
			if t.Right[col] {
				s = s.Align(lipgloss.Right)
			}
			return s
		})
	out := lt.Render()
	if t.Rule && t.Width > 0 && lipgloss.Width(out) > t.Width {
		out = lt.Width(t.Width).Render()
	}
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if !t.Rule {
			// Drop the outer padding: two spaces between columns, none
			// at the ends.
			l = strings.TrimRight(strings.TrimPrefix(l, " "), " ")
		}
		b.WriteString(t.Indent)
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Truncate shortens s to at most w terminal columns, ending in "…" when
// it cuts (escape sequences are kept and not counted).
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// Wrap breaks text at spaces into lines of at most width terminal
// columns (a longer word is cut); the lines carry no trailing newline.
func Wrap(text string, width int) []string {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return nil
	}
	return strings.Split(ansi.Wrap(text, width, ""), "\n")
}

// Width is the number of terminal columns s takes (wide characters two,
// escape sequences none).
func Width(s string) int { return ansi.StringWidth(s) }

// StripANSI removes escape sequences from s.
func StripANSI(s string) string { return ansi.Strip(s) }

// plainTableRows is the row count above which a table without Rule and
// row styles is laid out by renderPlain: lipgloss styles every cell
// (about 30 µs a row; 200,000 models took 6 s to print).
const plainTableRows = 1000

// renderPlain lays out a table without Rule as Render does (columns
// padded to their widest cell and separated by two spaces, no trailing
// blanks, the header bold when colour is on), without lipgloss. headers
// already carry MinWidth's padding.
func (t Table) renderPlain(st *Styles, headers []string) string {
	widths := make([]int, len(headers))
	for c, h := range headers {
		widths[c] = Width(h)
	}
	for _, row := range t.Rows {
		for c := 0; c < len(row) && c < len(widths); c++ {
			if w := Width(row[c]); w > widths[c] {
				widths[c] = w
			}
		}
	}
	var b strings.Builder
	line := func(cells []string, style func(string) string) {
		var l strings.Builder
		for c := range widths {
			v := ""
			if c < len(cells) {
				v = cells[c]
			}
			gap := strings.Repeat(" ", widths[c]-Width(v))
			if t.Right[c] {
				v = gap + v
			} else {
				v += gap
			}
			if c > 0 {
				l.WriteString("  ")
			}
			l.WriteString(v)
		}
		b.WriteString(t.Indent)
		b.WriteString(style(strings.TrimRight(l.String(), " ")))
		b.WriteByte('\n')
	}
	bold := func(s string) string { return s }
	if st.Color {
		bold = func(s string) string { return st.Bold.Render(s) }
	}
	line(headers, bold)
	for _, row := range t.Rows {
		line(row, func(s string) string { return s })
	}
	return b.String()
}
