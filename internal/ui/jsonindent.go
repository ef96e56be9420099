package ui

import (
	"bufio"
	"io"
)

// WriteIndentedJSON writes src, a compact and valid JSON text (what
// encoding/json's Marshal and Encoder write, without the Encoder's final
// newline), to w indented exactly as json.Indent(dst, src, "", indent)
// would, followed by one newline, through a 64 KiB buffer. json.Indent
// runs encoding/json's validating scanner over every byte and needs the
// whole indented copy in memory; this only tracks strings and nesting, so
// a 300 MB document (check metrics on 200,000 models, docs/performance.md)
// is indented in a fraction of the time and streamed. Input that is not
// compact valid JSON is written in some other, unspecified layout. It
// returns the first write error.
func WriteIndentedJSON(w io.Writer, src []byte, indent string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	depth, run := 0, 0
	// open: a '{' or '[' was the last byte; its newline waits until the
	// next byte shows the value is not empty ("{}" and "[]" stay as
	// they are, as in json.Indent).
	open := false
	pad := []byte{'\n'} // a newline and depth indents, grown as needed
	newline := func(upto int) {
		_, _ = bw.Write(src[run:upto])
		run = upto
		for len(pad) < 1+depth*len(indent) {
			pad = append(pad, indent...)
		}
		_, _ = bw.Write(pad[:1+depth*len(indent)])
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open {
			open = false
			if c == '}' || c == ']' {
				continue
			}
			depth++
			newline(i)
		}
		switch c {
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			open = true
		case ',':
			newline(i + 1)
		case ':':
			_, _ = bw.Write(src[run : i+1])
			run = i + 1
			_ = bw.WriteByte(' ')
		case '}', ']':
			depth--
			newline(i)
		}
	}
	_, _ = bw.Write(src[min(run, len(src)):])
	_ = bw.WriteByte('\n')
	return bw.Flush()
}
