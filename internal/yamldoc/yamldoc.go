// Package yamldoc is lcctl's one YAML loader: bytes in, a positioned
// gopkg.in/yaml.v3 node tree out. Every YAML input (lb-configs,
// snapshots, case and request files, scenarios, Helm values, Kubernetes
// manifests) is read through it, so they share one UTF-8 check, one
// single-document rule, one alias budget, one correction of yaml.v3's
// error lines and one error type with a position. No other package calls
// yaml.Unmarshal, yaml.NewDecoder or github.com/goccy/go-yaml.
//
// Two parsers, one job each: yaml.v3 builds the tree (its Node API keeps
// positions and comments, which migrate's rewrites need); go-yaml is asked
// only for the column of two kinds of syntax error that yaml.v3 reports
// by line alone (column.go; the decision and its measurements are in
// docs/validate.md, "YAML syntax error columns").
package yamldoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Kind classifies an Error.
type Kind int

// The kinds of Error.
const (
	// Syntax is a yaml.v3 syntax error (Msg is yaml.v3's message without
	// its "yaml: line N:" prefix).
	Syntax Kind = iota
	// Encoding is input that is not UTF-8 text (UTF-16 with a byte-order
	// mark is named as such).
	Encoding
	// Empty is input without any document (nothing, or only comments
	// before the end of the stream).
	Empty
	// MultiDoc is a second document where one is expected; the position
	// is the second document's.
	MultiDoc
	// TooManyDocs is a stream with more documents than its limit.
	TooManyDocs
	// Aliases is a document whose aliases expand beyond the budget
	// (CheckAliases); the position is the first alias.
	Aliases
	// Panic is a panic of the parser turned into an error.
	Panic
)

// Error is a problem reading YAML, with the 1-based line and column (in
// characters) it concerns. Line 0 means no position is known; Col 0 means
// the column is not known.
type Error struct {
	Kind      Kind
	Line, Col int
	// Msg says what is wrong, without the position.
	Msg string
}

// Error renders "line L:C: msg", "line L: msg" or msg.
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("line %d:%d: %s", e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Parse reads data as exactly one YAML document and returns its document
// node (Kind yaml.DocumentNode; Content holds the one body node, or is
// empty for a document of comments only). Errors are *Error: Encoding
// (CheckUTF8), Empty (no document at all), Syntax (line corrected as
// ErrorLine does, column as SyntaxError finds it), MultiDoc, Panic. It
// never panics. Aliases are not checked: see CheckAliases.
func Parse(data []byte) (doc *yaml.Node, err error) {
	if e := CheckUTF8(data); e != nil {
		return nil, e
	}
	d := NewStream(data)
	doc, err = d.Next()
	if errors.Is(err, io.EOF) {
		return nil, &Error{Kind: Empty, Msg: "empty input: no YAML document"}
	}
	if err != nil {
		return nil, err
	}
	second, err := d.Next()
	switch {
	case err == nil:
		return nil, &Error{Kind: MultiDoc, Line: second.Line, Col: second.Column, Msg: "more than one YAML document"}
	case !errors.Is(err, io.EOF):
		return nil, err
	}
	return doc, nil
}

// Body returns the body of a document node (its one content node), the
// node itself when it is not a document, or nil for an empty document.
func Body(doc *yaml.Node) *yaml.Node {
	if doc == nil || doc.Kind != yaml.DocumentNode {
		return doc
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

// Stream reads the documents of a YAML stream one at a time (Kubernetes
// manifests, kubectl and helm output). It does not check the encoding:
// call CheckUTF8 first when positions must match the bytes.
type Stream struct {
	data []byte
	dec  *yaml.Decoder
	err  error
}

// NewStream returns a Stream over data.
func NewStream(data []byte) *Stream {
	return &Stream{data: data, dec: yaml.NewDecoder(bytes.NewReader(data))}
}

// Next returns the next document node, io.EOF after the last one, or an
// *Error (Syntax, Panic); after an error every call returns it again.
func (s *Stream) Next() (doc *yaml.Node, err error) {
	if s.err != nil {
		return nil, s.err
	}
	defer func() {
		if r := recover(); r != nil {
			// yaml.v3 is not known to panic on v3.0.1 inputs, but a
			// decoder of untrusted text must never take the process
			// down.
			doc, err = nil, &Error{Kind: Panic, Msg: fmt.Sprintf("YAML parser failed: %v", r)}
			s.err = err
		}
	}()
	var n yaml.Node
	if err := s.dec.Decode(&n); err != nil {
		if !errors.Is(err, io.EOF) {
			err = SyntaxError(err, s.data)
		}
		s.err = err
		return nil, err
	}
	return &n, nil
}

// SyntaxError turns an error of yaml.v3 into an *Error on the line it
// concerns (ErrorLine; an error yaml.v3 marks past the last line of data,
// at the end of the stream, is put on the line of the flow collection or
// quoted scalar left open, else on the last line), with the column when
// syntaxColumn can trust one.
// An *Error is returned as it is.
func SyntaxError(err error, data []byte) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	line, msg := ErrorLine(err)
	line = pastEndLine(data, line)
	if je := jsonSyntaxError(data); je != nil {
		return je
	}
	if line == 0 && strings.Contains(msg, "control characters are not allowed") {
		// yaml.v3's reader gives no position for this one: find the
		// character it refused.
		if l, col, r, ok := firstDisallowed(data); ok {
			return &Error{Kind: Syntax, Line: l, Col: col, Msg: fmt.Sprintf("%s (U+%04X)", msg, r)}
		}
	}
	if l, col := syntaxColumn(data, line, msg); col > 0 {
		return &Error{Kind: Syntax, Line: l, Col: col, Msg: msg}
	}
	return &Error{Kind: Syntax, Line: line, Msg: msg}
}

// Decode decodes node into v (yaml.v3's Node.Decode), with a panic turned
// into an error.
func Decode(node *yaml.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Kind: Panic, Msg: fmt.Sprintf("YAML decoder failed: %v", r)}
		}
	}()
	return node.Decode(v)
}

// Unmarshal parses data as one YAML document into v (yaml.v3's
// Unmarshal), with a panic turned into an error. Errors are *Error.
func Unmarshal(data []byte, v any) error {
	doc, err := Parse(data)
	if err != nil {
		return err
	}
	if err := Decode(doc, v); err != nil {
		return SyntaxError(err, data)
	}
	return nil
}

// CheckUTF8 returns nil when data is UTF-8 text, and otherwise an
// Encoding *Error at its first invalid byte (line and column in
// characters, 1-based). yaml.v3 would transcode UTF-16 with a byte-order
// mark and read other bytes as Latin-1, so positions in its errors would
// not match the file.
func CheckUTF8(data []byte) *Error {
	if utf8.Valid(data) {
		return nil
	}
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return &Error{Kind: Encoding, Line: 1, Col: 1, Msg: "UTF-16 text (byte-order mark at offset 0): not UTF-8 text (save the file as UTF-8, e.g. iconv -f UTF-16 -t UTF-8)"}
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return &Error{Kind: Encoding, Line: line, Col: col, Msg: "not UTF-8 text (save the file as UTF-8; UTF-16 and other encodings are not read)"}
}

// The alias budget: the values aliases may add to a document are
// max(AliasFloor, AliasFactor × the document's own node count), the bound
// lcctl validate applies (docs/validate.md).
const (
	AliasFloor  = 10_000
	AliasFactor = 10
)

// CheckAliases refuses a document whose aliases, expanded, add more
// values than the alias budget: an Aliases *Error at the first alias.
// Readers that decode aliased subtrees more than once (case files decode
// and validate each case's lb_config once per alias: 2,000 aliases of one
// large lb_config took seconds and gigabytes) call it after Parse. A
// recursive alias counts as over the budget.
func CheckAliases(root *yaml.Node) *Error {
	if root == nil {
		return nil
	}
	raw := 0
	var first *yaml.Node
	var count func(n *yaml.Node, depth int)
	count = func(n *yaml.Node, depth int) {
		raw++
		if n.Kind == yaml.AliasNode {
			if first == nil {
				first = n
			}
			return
		}
		if depth > 10_000 {
			return
		}
		for _, c := range n.Content {
			count(c, depth+1)
		}
	}
	count(root, 0)
	if first == nil {
		return nil
	}
	limit := raw + max(AliasFloor, AliasFactor*raw)
	memo := map[*yaml.Node]int{}
	var size func(n *yaml.Node, depth int) int
	size = func(n *yaml.Node, depth int) int {
		if v, ok := memo[n]; ok {
			return v
		}
		if depth > 10_000 {
			return limit + 1
		}
		memo[n] = limit + 1 // a node reached again while in progress: a recursive alias
		total := 1
		if n.Kind == yaml.AliasNode {
			if n.Alias != nil {
				total = size(n.Alias, depth+1)
			}
		} else {
			for _, c := range n.Content {
				if total += size(c, depth+1); total > limit {
					total = limit + 1
					break
				}
			}
		}
		memo[n] = total
		return total
	}
	if got := size(root, 0); got > limit {
		return &Error{Kind: Aliases, Line: first.Line, Col: first.Column,
			Msg: fmt.Sprintf("YAML aliases expand this document beyond %d values (it has %d of its own): refused as an alias bomb", limit, raw)}
	}
	return nil
}

// firstDisallowed returns the line and column (1-based, in characters) of
// the first character YAML 1.2 does not allow in a stream (§5.1: C0
// controls other than tab, LF and CR, DEL, C1 controls other than NEL,
// surrogates, U+FFFE and U+FFFF; yaml.v3's reader refuses the same), and
// the character.
func firstDisallowed(data []byte) (line, col int, r rune, ok bool) {
	line, col = 1, 1
	for i := 0; i < len(data); {
		c, size := utf8.DecodeRune(data[i:])
		allowed := c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
			(c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF)
		if c == utf8.RuneError && size <= 1 {
			allowed = false
		}
		if !allowed && !(i == 0 && c == 0xFEFF) {
			return line, col, c, true
		}
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return 0, 0, 0, false
}

// maxYAMLKey is the longest key yaml.v3 reads as a simple key (1024
// characters, YAML 1.2 §7.4.2's limit for implicit keys).
const maxYAMLKey = 1024

// jsonSyntaxError explains, for valid JSON that yaml.v3 refused, why in
// JSON's terms: an object key longer than 1024 characters, which yaml.v3
// cannot read as a key (it reported "did not find expected ',' or '}'"),
// with the key's line and column. It returns nil for anything else
// (yaml.v3's own message stands).
func jsonSyntaxError(data []byte) *Error {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return nil
	}
	at := func(off int64) (int, int) {
		off = min(max(off, 0), int64(len(data)))
		line := 1 + bytes.Count(data[:off], []byte{'\n'})
		sol := bytes.LastIndexByte(data[:off], '\n') + 1
		return line, 1 + utf8.RuneCount(data[sol:off])
	}
	// Invalid JSON may still be a YAML flow document ({model: m}):
	// yaml.v3's message stands for it.
	if !json.Valid(data) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	type container struct{ object, wantKey bool }
	var stack []container
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			// A key, or the end of the object.
			if key, ok := tok.(string); ok {
				if k := utf8.RuneCountInString(key); k > maxYAMLKey {
					off := start + int64(bytes.IndexByte(data[start:], '"'))
					l, c := at(off)
					return &Error{Kind: Syntax, Line: l, Col: c, Msg: fmt.Sprintf("an object key of %d characters: the YAML parser lcctl reads JSON with accepts keys of at most %d characters", k, maxYAMLKey)}
				}
				stack[n-1].wantKey = false
				continue
			}
			stack = stack[:n-1] // '}'
			continue
		}
		// A value, or the end of an array.
		if d, ok := tok.(json.Delim); ok && d == ']' {
			stack = stack[:len(stack)-1]
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, container{object: d == '{', wantKey: d == '{'})
		}
	}
}
