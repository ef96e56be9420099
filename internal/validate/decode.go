package validate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxInputBytes is the largest input lcctl decodes (16 MiB). Real
// lb-configs are a few kilobytes; a 1,000-model config is about 100 KiB.
// Larger input is refused with LC1000 before any parsing.
const MaxInputBytes = 16 << 20

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// DetectFormat decides how to read a file (lb-config.md §2.5): `*.json` is
// JSON, `*.yaml`/`*.yml` is YAML (case-insensitive extension); any other
// name, and standard input ("-" or ""), is JSON when the first byte that is
// not JSON whitespace (after an optional UTF-8 byte-order mark) is `{`, `[`
// or `"`, and YAML otherwise.
func DetectFormat(name string, data []byte) Format {
	if name != "" && name != "-" {
		switch strings.ToLower(filepath.Ext(name)) {
		case ".json":
			return FormatJSON
		case ".yaml", ".yml":
			return FormatYAML
		}
	}
	rest := bytes.TrimPrefix(data, utf8BOM)
	rest = bytes.TrimLeft(rest, " \t\r\n")
	if len(rest) > 0 && (rest[0] == '{' || rest[0] == '[' || rest[0] == '"') {
		return FormatJSON
	}
	return FormatYAML
}

// Decode parses data into a positioned Document. format FormatUnknown means
// DetectFormat. Decoding never panics; on failure the Document has a nil
// Root and the diagnostics say why (LC1000 too large, LC1001 syntax,
// LC11xx YAML problems). YAML problems that leave a usable tree (a special
// float, an unsupported tag) are returned with the tree.
func Decode(name string, data []byte, format Format) (*Document, []Diagnostic) {
	return decode(name, data, format, MaxInputBytes)
}

// DecodeRewritten is Decode without the MaxInputBytes limit, for a text
// lcctl produced itself from an input that was within the limit: the
// rewritten file migrate decodes, compares with the intended document and
// validates before anything is written. A migration grows a file (a
// 15.9 MB config of 124,000 models becomes 22 MB under --strategy
// bounded), and refusing lcctl's own output for a limit meant for what
// the operator hands in left such a file unmigratable. Everything else
// (text checks, syntax, YAML limits) is as for Decode; a text over 2 GiB
// is still refused (LC1000), since positions are 32-bit (Pos).
func DecodeRewritten(name string, data []byte, format Format) (*Document, []Diagnostic) {
	return decode(name, data, format, -1)
}

// decode is Decode with a size limit in bytes; a negative limit means
// none.
func decode(name string, data []byte, format Format, limit int) (*Document, []Diagnostic) {
	file := displayName(name)
	doc := &Document{File: file, Source: data}
	if format == FormatUnknown {
		format = DetectFormat(name, data)
	}
	doc.Format = format
	if limit < 0 || limit > math.MaxInt32 {
		// Positions are 32-bit (Pos): no text lcctl decodes may be
		// longer, whatever the caller's limit.
		limit = math.MaxInt32
	}
	if len(data) > limit {
		return doc, []Diagnostic{newDiag(CodeRead, file, Pos{Offset: -1}, "", "",
			fmt.Sprintf("failed to read lb config file: %s: %d bytes is more than lcctl's %d-byte (16 MiB) input limit", file, len(data), MaxInputBytes))}
	}
	if d, bad := checkText(file, data); bad {
		return doc, []Diagnostic{d}
	}
	pt := newPosTracker(data)
	if len(bytes.TrimLeft(bytes.TrimPrefix(data, utf8BOM), " \t\r\n")) == 0 {
		return doc, []Diagnostic{newDiag(CodeSyntax, file, pt.at(len(data)), "", "",
			"EOF while parsing a value: the input is empty")}
	}
	switch format {
	case FormatJSON:
		if bytes.HasPrefix(data, utf8BOM) {
			return doc, []Diagnostic{newDiag(CodeSyntax, file, pt.at(0), "", "",
				"expected value at line 1 column 1: a UTF-8 byte-order mark is not allowed (Stargate parses the file with serde_json)")}
		}
		root, err := decodeJSON(data)
		if err != nil {
			return doc, []Diagnostic{syntaxDiag(file, data, pt, err)}
		}
		doc.Root = root
		return doc, nil
	default:
		ydoc, root, issues, err := decodeYAML(data, file)
		if err != nil {
			return doc, []Diagnostic{syntaxDiag(file, data, pt, err)}
		}
		doc.Root, doc.YAML = root, ydoc
		return doc, issues
	}
}

func displayName(name string) string {
	if name == "" {
		return "-"
	}
	return name
}

// checkText refuses binary data and invalid UTF-8 (serde_json and yaml.v3
// both require UTF-8 text).
func checkText(file string, data []byte) (Diagnostic, bool) {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		// UTF-16 (or UTF-32) with a byte-order mark: its NUL bytes would
		// otherwise be reported as binary data at offset 1 or 3.
		return newDiag(CodeSyntax, file, newPosTracker(data).at(0), "", "",
			"UTF-16 text (byte-order mark at offset 0): an lb-config is a UTF-8 JSON or YAML text; convert it, e.g. iconv -f UTF-16 -t UTF-8"), true
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return newDiag(CodeSyntax, file, newPosTracker(data).at(i), "", "",
			fmt.Sprintf("binary data: NUL byte at offset %d; an lb-config is a JSON or YAML text", i)), true
	}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return newDiag(CodeSyntax, file, newPosTracker(data).at(i), "", "",
			fmt.Sprintf("invalid UTF-8 at offset %d: an lb-config is a UTF-8 JSON or YAML text", i)), true
	}
	return Diagnostic{}, false
}

func syntaxDiag(file string, data []byte, pt *posTracker, err error) Diagnostic {
	var se *syntaxError
	if !errors.As(err, &se) {
		return newDiag(CodeSyntax, file, Pos{Offset: -1}, "", "", err.Error())
	}
	code := se.code
	if code == "" {
		code = CodeSyntax
	}
	var pos Pos
	switch {
	case se.node != nil:
		pos = MakePos(-1, se.node.Line, se.node.Column)
		if se.off >= 0 {
			pos.Offset = MakePos(se.off, 0, 0).Offset
		}
	case se.line > 0:
		pos = MakePos(se.off, se.line, se.col)
	case se.off >= 0:
		pos = pt.at(se.off)
	default:
		pos = Pos{Offset: -1}
	}
	msg := se.msg
	switch {
	case se.serde:
		// serde_json appends its own position (bytes, see
		// serdePosition); keep Stargate's wording exactly.
		off := se.off
		if se.serdeOff >= 0 {
			off = se.serdeOff
		}
		line, col := serdePosition(data, off)
		msg = fmt.Sprintf("%s at line %d column %d", msg, line, col)
		if pos.Line > 0 && (line != int(pos.Line) || col != int(pos.Col)) {
			// serde counts bytes and reports where it stopped (after a
			// number); the diagnostic points at the value's first
			// character. Say why the two positions differ.
			msg += fmt.Sprintf(" (Stargate's position, in bytes after what it read; the value starts at line %d, column %d)", pos.Line, pos.Col)
		}
	case pos.Line > 0 && code == CodeSyntax && !strings.HasPrefix(msg, "YAML"):
		msg = fmt.Sprintf("%s at line %d column %d", msg, pos.Line, pos.Col)
	}
	return newDiag(code, file, pos, "", "", msg)
}
