package ui

import (
	"bufio"
	"io"
)

// JSONIndenter is an io.Writer that takes a compact, valid JSON text
// (what encoding/json's Marshal and Encoder write, without the Encoder's
// final newline) in pieces of any size and writes it to an underlying
// writer indented exactly as json.Indent(dst, src, "", indent) would,
// through a 64 KiB buffer; Close ends it with one newline and flushes.
// json.Indent runs encoding/json's validating scanner over every byte and
// needs the whole indented copy in memory; this only tracks strings and
// nesting, so a 300 MB document (check metrics on 200,000 models,
// docs/performance.md) is indented in a fraction of the time and
// streamed. Input that is not compact valid JSON is written in some
// other, unspecified layout.
type JSONIndenter struct {
	w      *bufio.Writer
	indent string
	depth  int
	// open: a '{' or '[' was the last byte; its newline waits until the
	// next byte shows the value is not empty ("{}" and "[]" stay as
	// they are, as in json.Indent).
	open              bool
	inString, escaped bool
	pad               []byte // a newline and depth indents, grown as needed
	err               error
}

// NewJSONIndenter returns a JSONIndenter writing to w with one indent
// per level.
func NewJSONIndenter(w io.Writer, indent string) *JSONIndenter {
	return &JSONIndenter{w: bufio.NewWriterSize(w, 64<<10), indent: indent, pad: []byte{'\n'}}
}

// Write indents src, the next piece of the document. It returns len(src)
// and the first write error of the underlying writer, if any.
func (j *JSONIndenter) Write(src []byte) (int, error) {
	run := 0 // src[run:i] is yet to be written as it is
	newline := func(upto int) {
		_, _ = j.w.Write(src[run:upto])
		run = upto
		n := 1 + j.depth*len(j.indent)
		for len(j.pad) < n {
			j.pad = append(j.pad, j.indent...)
		}
		_, _ = j.w.Write(j.pad[:n])
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if j.inString {
			switch {
			case j.escaped:
				j.escaped = false
			case c == '\\':
				j.escaped = true
			case c == '"':
				j.inString = false
			}
			continue
		}
		if j.open {
			j.open = false
			if c == '}' || c == ']' {
				continue
			}
			j.depth++
			newline(i)
		}
		switch c {
		case '"':
			j.inString = true
		case '{', '[':
			j.open = true
		case ',':
			newline(i + 1)
		case ':':
			_, _ = j.w.Write(src[run : i+1])
			run = i + 1
			_ = j.w.WriteByte(' ')
		case '}', ']':
			j.depth--
			newline(i)
		}
	}
	_, err := j.w.Write(src[run:])
	if j.err == nil {
		j.err = err
	}
	return len(src), j.err
}

// Close writes the final newline and flushes; it returns the first write
// error.
func (j *JSONIndenter) Close() error {
	_ = j.w.WriteByte('\n')
	if err := j.w.Flush(); j.err == nil {
		j.err = err
	}
	return j.err
}

// WriteIndentedJSON writes src, a compact and valid JSON text, to w
// indented as json.Indent(dst, src, "", indent) would and followed by
// one newline (a JSONIndenter fed src at once). It returns the first
// write error.
func WriteIndentedJSON(w io.Writer, src []byte, indent string) error {
	j := NewJSONIndenter(w, indent)
	_, _ = j.Write(src)
	return j.Close()
}
