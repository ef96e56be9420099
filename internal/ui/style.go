package ui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles is the palette every renderer uses. When colour is off every style
// renders its text unchanged, so plain output is byte-stable for golden
// tests and pipes.
type Styles struct {
	// Color reports whether ANSI styling is enabled.
	Color bool
	r     *lipgloss.Renderer

	Bold, Faint, Error, Warning, Info, OK, Accent, Header lipgloss.Style
}

// NewStyles returns styles bound to w. color=false yields plain text.
func NewStyles(w io.Writer, color bool) *Styles {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	s := &Styles{Color: color, r: r}
	s.Bold = r.NewStyle().Bold(true)
	s.Faint = r.NewStyle().Faint(true)
	s.Error = r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true)
	s.Warning = r.NewStyle().Foreground(lipgloss.Color("11")).Bold(true)
	s.Info = r.NewStyle().Foreground(lipgloss.Color("12"))
	s.OK = r.NewStyle().Foreground(lipgloss.Color("10")).Bold(true)
	s.Accent = r.NewStyle().Foreground(lipgloss.Color("13"))
	s.Header = r.NewStyle().Bold(true).Underline(true)
	if !color {
		plain := r.NewStyle()
		s.Bold, s.Faint, s.Error, s.Warning, s.Info, s.OK, s.Accent, s.Header =
			plain, plain, plain, plain, plain, plain, plain, plain
	}
	return s
}

// Renderer returns the lipgloss renderer bound to the output, for tables and
// other composite widgets.
func (s *Styles) Renderer() *lipgloss.Renderer { return s.r }

// Printable returns s with every control character (C0, DEL and C1; tab
// and newline included) and every bidirectional formatting character
// (U+200E, U+200F, U+061C, U+202A–U+202E, U+2066–U+2069) replaced by its
// Go escape (\x1b, \u009b, \u202e), and every byte that is not part of
// valid UTF-8 by \xNN (\xff), so data from scrapes, stores, files, file
// names or arguments cannot send escape sequences to the terminal
// (recolour, clear or retitle it), reorder what it shows ("\u202egnp.exe"
// displayed as "exe.png") or reach it as bytes it cannot show. Text
// without such characters is returned unchanged.
func Printable(s string) string {
	if printable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// printable reports whether Printable leaves s as it is: valid UTF-8
// without a control or bidirectional formatting character.
func printable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, isControl) < 0
}

func isControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0) || // C0, DEL, C1
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c // bidi
}

// MaxEchoedLabel is how many bytes of a label value (a model name, a
// result value from a scrape) text output and messages echo; the rest is
// said as a byte count (EchoLabel).
const MaxEchoedLabel = 200

// EchoLabel returns v, a label value taken from input (a scrape's model,
// result or routing_key label), as text output and messages quote it: v
// itself up to MaxEchoedLabel bytes, else its first MaxEchoedLabel bytes
// (cut back to a UTF-8 character boundary) followed by "… (N bytes)",
// N being len(v). A hostile or broken exporter's 2 MB label is then
// echoed as 200 bytes in each of the places that name it, not 2 MB.
// Data fields of JSON documents (a row's model) keep the value exact.
func EchoLabel(v string) string {
	if len(v) <= MaxEchoedLabel {
		return v
	}
	cut := MaxEchoedLabel
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "… (" + strconv.Itoa(len(v)) + " bytes)"
}

// PrintableLines is Printable for multi-line text: each line is made
// printable and the newlines between them are kept. Error messages, which
// can list one problem per line and quote file names and values, go to the
// terminal through it.
func PrintableLines(s string) string {
	if printable(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	return strings.Join(lines, "\n")
}

// JSONSafe returns b, a JSON text, with every character that Printable
// escapes and encoding/json writes as it is (the C1 controls
// U+0080–U+009F and the bidirectional formatting characters) replaced by
// its \uXXXX escape, so JSON piped to a terminal cannot reorder or
// recolour what it shows. The JSON means the same: such characters can
// only occur inside strings, where \uXXXX is the same character. b is
// returned unchanged (not copied) when it holds none.
func JSONSafe(b []byte) []byte {
	var out []byte // nil until the first replacement
	run := 0       // b[run:i] is yet to be copied as it is
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if isControl(r) {
			if out == nil {
				out = make([]byte, 0, len(b)+12)
			}
			out = append(out, b[run:i]...)
			out = fmt.Appendf(out, `\u%04x`, r)
			run = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[run:]...)
}
