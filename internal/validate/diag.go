package validate

import (
	"cmp"
	"fmt"
	"slices"
)

// Severity ranks a diagnostic. Only errors make a config invalid; warnings
// fail `lcctl validate --strict`; infos never fail.
type Severity uint8

// Severities, most severe first.
const (
	SeverityError Severity = iota
	SeverityWarning
	SeverityInfo
)

// String returns "error", "warning" or "info".
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	}
	return "info"
}

// MarshalText renders the String form (JSON output).
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one finding about one place in one file. The JSON field
// names are part of lcctl's stable output schema (docs/validate.md).
type Diagnostic struct {
	// Severity is error, warning or info (fixed per Code).
	Severity Severity `json:"severity"`
	// Code is the stable code, e.g. "LC1013" (docs/diagnostics.md).
	Code Code `json:"code"`
	// Rule is the lb-config.md rule the code reproduces ("V13", "W1"), or
	// "" for lcctl-only checks.
	Rule string `json:"rule,omitempty"`
	// File is the file name as given ("-" for standard input).
	File string `json:"file"`
	// Line is 1-based; 0 means unknown (a file that cannot be read).
	Line int `json:"line"`
	// Col is the 1-based column counted in characters; 0 means unknown
	// (YAML syntax errors have no column).
	Col int `json:"column"`
	// Offset is the 0-based byte offset, -1 when unknown.
	Offset int `json:"offset"`
	// Path is the JSON path of the value, e.g. `models["model-a"].max_queued`;
	// "" for the whole document.
	Path string `json:"path"`
	// Field is the field or key the finding is about (max_queued, the
	// top-level default, a model ID), "" when none.
	Field string `json:"field,omitempty"`
	// Algorithm is the canonical algorithm of the entry involved, "" when
	// none is known.
	Algorithm string `json:"algorithm,omitempty"`
	// Spelling is the algorithm name as written when it differs from the
	// canonical name ("pulsar-multiregion").
	Spelling string `json:"spelling,omitempty"`
	// Message names the field and the algorithm and contains Stargate's own
	// error text for the rule (lb-config.md §8).
	Message string `json:"message"`
	// Hint suggests a fix, "" when none.
	Hint string `json:"hint,omitempty"`
}

// String renders "file:line:col: severity CODE path: message".
func (d Diagnostic) String() string {
	loc := d.File
	if d.Line > 0 {
		loc += fmt.Sprintf(":%d", d.Line)
		if d.Col > 0 {
			loc += fmt.Sprintf(":%d", d.Col)
		}
	}
	s := fmt.Sprintf("%s: %s %s", loc, d.Severity, d.Code)
	if d.Path != "" {
		s += " " + d.Path
	}
	return s + ": " + d.Message
}

// newDiag builds a diagnostic with the severity and rule of code.
func newDiag(code Code, file string, pos Pos, path, field, msg string) Diagnostic {
	info := codeInfo(code)
	return Diagnostic{
		Severity: info.Severity, Code: code, Rule: info.Rule, File: file,
		Line: int(pos.Line), Col: int(pos.Col), Offset: int(pos.Offset),
		Path: path, Field: field, Message: msg,
	}
}

// sortDiagnostics orders diagnostics by position (unknown positions first),
// then by code, keeping the emission order otherwise.
func sortDiagnostics(ds []Diagnostic) {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		if c := cmp.Compare(a.Line, b.Line); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Col, b.Col); c != 0 {
			return c
		}
		return cmp.Compare(a.Code, b.Code)
	})
}

// Counts tallies diagnostics by severity.
type Counts struct {
	// Errors counts SeverityError diagnostics.
	Errors int `json:"errors"`
	// Warnings counts SeverityWarning diagnostics.
	Warnings int `json:"warnings"`
	// Infos counts SeverityInfo diagnostics.
	Infos int `json:"infos"`
}

// Add counts d.
func (c *Counts) Add(d Diagnostic) {
	switch d.Severity {
	case SeverityError:
		c.Errors++
	case SeverityWarning:
		c.Warnings++
	default:
		c.Infos++
	}
}

// CountDiagnostics tallies ds by severity.
func CountDiagnostics(ds []Diagnostic) Counts {
	var c Counts
	for _, d := range ds {
		c.Add(d)
	}
	return c
}
