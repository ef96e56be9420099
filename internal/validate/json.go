package validate

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"gopkg.in/yaml.v3"
)

// maxDepth is serde_json's recursion limit: it refuses the 128th nested
// array or object ("recursion limit exceeded"). Stargate parses the file
// with serde_json::from_slice (lb-config.md §2.2), so lcctl applies the same
// limit to JSON and YAML input.
const maxDepth = 128

// syntaxError is a decoding failure at a byte offset, worded like
// serde_json's error codes (lb-config.md V1).
type syntaxError struct {
	msg string
	// off is the byte offset of the problem, -1 when unknown.
	off int
	// line overrides the line computed from off (YAML errors, which
	// yaml.v3 reports by line only); 0 means compute it.
	line int
	// col, with line, is the 1-based column in characters; 0 = unknown.
	col int
	// code is the diagnostic code; empty means CodeSyntax (V1).
	code Code
	// node is the YAML node at fault, when known.
	node *yaml.Node
	// serde marks a JSON error found by jsonParser: its message gets
	// serde_json's " at line L column C" suffix (see serdePosition).
	serde bool
	// serdeOff, when serde is set and serdeOff >= 0, is the offset
	// serde_json's position is computed from instead of off.
	serdeOff int
}

// Error returns the message.
func (e *syntaxError) Error() string { return e.msg }

// posTracker converts byte offsets to line/column. Offsets must be asked
// for in non-decreasing order for linear cost; a smaller offset restarts
// the count from the beginning.
type posTracker struct {
	data           []byte
	off, line, col int
}

func newPosTracker(data []byte) *posTracker { return &posTracker{data: data, line: 1, col: 1} }

func (t *posTracker) at(off int) Pos {
	if off < t.off {
		t.off, t.line, t.col = 0, 1, 1
	}
	if off > len(t.data) {
		off = len(t.data)
	}
	for t.off < off {
		c := t.data[t.off]
		switch {
		case c == '\n':
			t.line++
			t.col = 1
			t.off++
		case c < utf8.RuneSelf:
			t.col++
			t.off++
		default:
			_, n := utf8.DecodeRune(t.data[t.off:])
			t.col++
			t.off += n
		}
	}
	return MakePos(off, t.line, t.col)
}

// jsonParser decodes one JSON text into a Value tree, following
// serde_json's grammar: RFC 8259 JSON, whitespace limited to space, tab,
// LF and CR, no byte-order mark, no comments, no trailing commas, nothing
// but whitespace after the value, nesting below 128 levels, and the number
// readings of lb-config.md §7.2.
type jsonParser struct {
	data  []byte
	i     int
	depth int
	pt    *posTracker

	// Allocation, which bounds memory on large files (124,000 models:
	// the tree of the rewritten text was the largest part of migrate's
	// peak): values come from slabs, an object's members are gathered on
	// a stack and copied out at their final size (no append growth), and
	// short strings repeated across entries (field names, algorithm names,
	// small numbers) are shared.
	vals    []Value
	members []Member
	mslab   []Member
	strs    map[string]string
}

// Slab and sharing sizes of jsonParser.
const (
	// values per slab: as many as fill 64 KiB, since a slab is a large
	// object that takes whole 8 KiB pages (256 values of 144 bytes took
	// 40 KiB for 36 KiB, a tenth of every decoded tree).
	valueSlab  = 64 << 10 / int(unsafe.Sizeof(Value{}))
	memberSlab = 512  // members per slab (a larger object gets its own)
	maxShared  = 4096 // distinct shared strings per document
	maxShare   = 48   // longest shared string, bytes
)

// newValue returns a zero Value from the current slab.
func (p *jsonParser) newValue() *Value {
	if len(p.vals) == 0 {
		p.vals = make([]Value, valueSlab)
	}
	v := &p.vals[0]
	p.vals = p.vals[1:]
	return v
}

// membersFrom returns the members gathered since mark as a slice of its
// own final size (capacity included, so an append by a reader copies
// instead of overwriting a neighbour) and pops them.
func (p *jsonParser) membersFrom(mark int) []Member {
	n := len(p.members) - mark
	if n == 0 {
		return nil
	}
	var out []Member
	if n > memberSlab/4 {
		out = make([]Member, n)
	} else {
		if len(p.mslab) < n {
			p.mslab = make([]Member, memberSlab)
		}
		out = p.mslab[:n:n]
		p.mslab = p.mslab[n:]
	}
	copy(out, p.members[mark:])
	clear(p.members[mark:])
	p.members = p.members[:mark]
	return out
}

// text returns b as a string, shared with earlier equal short strings.
func (p *jsonParser) text(b []byte) string {
	if len(b) > maxShare {
		return string(b)
	}
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if p.strs == nil {
		p.strs = map[string]string{}
	}
	if len(p.strs) < maxShared {
		p.strs[s] = s
	}
	return s
}

// decodeJSON parses data (already checked to be valid UTF-8) as one JSON
// value. It returns a *syntaxError on failure.
func decodeJSON(data []byte) (root *Value, err error) {
	p := &jsonParser{data: data, pt: newPosTracker(data)}
	p.skipWS()
	if p.i >= len(p.data) {
		return nil, p.fail("EOF while parsing a value")
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipWS()
	if p.i < len(p.data) {
		return nil, p.fail("trailing characters")
	}
	return v, nil
}

func (p *jsonParser) fail(msg string) error {
	return &syntaxError{msg: msg, off: p.i, serde: true, serdeOff: -1}
}

// serdePosition is the line and column serde_json appends to a syntax
// error found at byte offset off (the byte it was looking at, or len(data)
// at the end of the input): serde_json reports the position just after
// that byte, columns counted in bytes from 1, so a problem at the end of
// the input is reported at the column of the last byte (serde_json
// src/read.rs, position_of_index).
func serdePosition(data []byte, off int) (line, col int) {
	i := min(max(off+1, 0), len(data))
	sol := bytes.LastIndexByte(data[:i], '\n') + 1
	return 1 + bytes.Count(data[:sol], []byte{'\n'}), i - sol
}

func (p *jsonParser) skipWS() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (*Value, error) {
	start := p.i
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		pos := p.pt.at(start)
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		v := p.newValue()
		*v = Value{Kind: KindString, Text: s, Start: pos, End: int32(p.i)}
		return v, nil
	case c == 't':
		return p.ident("true", KindBool)
	case c == 'f':
		return p.ident("false", KindBool)
	case c == 'n':
		return p.ident("null", KindNull)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.fail("expected value")
	}
}

func (p *jsonParser) ident(word string, kind Kind) (*Value, error) {
	start := p.i
	for k := 0; k < len(word); k++ {
		if p.i >= len(p.data) {
			return nil, p.fail("EOF while parsing a value")
		}
		if p.data[p.i] != word[k] {
			return nil, p.fail("expected ident")
		}
		p.i++
	}
	v := p.newValue()
	*v = Value{Kind: kind, Text: word, Start: p.pt.at(start), End: int32(p.i)}
	return v, nil
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth >= maxDepth {
		return p.fail("recursion limit exceeded")
	}
	return nil
}

// open starts an object or an array at its opening byte: it enters one
// level of nesting and reads up to the first member or item. done is true
// when the container is empty (close follows at once; v is complete). eof
// is serde_json's message for input that ends inside the container.
func (p *jsonParser) open(kind Kind, close byte, eof string) (v *Value, done bool, err error) {
	if err := p.enter(); err != nil {
		return nil, false, err
	}
	v = p.newValue()
	*v = Value{Kind: kind, Start: p.pt.at(p.i)}
	p.i++ // { or [
	p.skipWS()
	if p.i >= len(p.data) {
		return nil, false, p.fail(eof)
	}
	if p.data[p.i] == close {
		p.i++
		v.End = int32(p.i)
		p.depth--
		return v, true, nil
	}
	return v, false, nil
}

// next reads what follows a member or an item of v: a comma and the start
// of the next one, or close, which ends v (done). eof and expected are
// serde_json's messages for input that ends there and for any other byte.
func (p *jsonParser) next(v *Value, close byte, eof, expected string) (done bool, err error) {
	p.skipWS()
	if p.i >= len(p.data) {
		return false, p.fail(eof)
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		p.skipWS()
		if p.i < len(p.data) && p.data[p.i] == close {
			return false, p.fail("trailing comma")
		}
		if p.i >= len(p.data) {
			// serde_json expects the next member's or item's value here.
			return false, p.fail("EOF while parsing a value")
		}
		return false, nil
	case close:
		p.i++
		v.End = int32(p.i)
		p.depth--
		return true, nil
	default:
		return false, p.fail(expected)
	}
}

func (p *jsonParser) object() (*Value, error) {
	v, done, err := p.open(KindObject, '}', "EOF while parsing an object")
	if err != nil || done {
		return v, err // v is nil after an error
	}
	mark := len(p.members)
	for {
		if p.i >= len(p.data) {
			return nil, p.fail("EOF while parsing an object")
		}
		if p.data[p.i] != '"' {
			return nil, p.fail("key must be a string")
		}
		keyStart := p.pt.at(p.i)
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		keyEnd := p.i
		p.skipWS()
		if p.i >= len(p.data) {
			return nil, p.fail("EOF while parsing an object")
		}
		if p.data[p.i] != ':' {
			return nil, p.fail("expected `:`")
		}
		p.i++
		p.skipWS()
		if p.i >= len(p.data) {
			return nil, p.fail("EOF while parsing a value")
		}
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, Member{Key: key, KeyStart: keyStart, KeyEnd: int32(keyEnd), Value: val})
		done, err := p.next(v, '}', "EOF while parsing an object", "expected `,` or `}`")
		if err != nil {
			return nil, err
		}
		if done {
			v.Members = p.membersFrom(mark)
			return v, nil
		}
	}
}

func (p *jsonParser) array() (*Value, error) {
	v, done, err := p.open(KindArray, ']', "EOF while parsing a list")
	if err != nil || done {
		return v, err // v is nil after an error
	}
	for {
		if p.i >= len(p.data) {
			return nil, p.fail("EOF while parsing a list")
		}
		item, err := p.value()
		if err != nil {
			return nil, err
		}
		v.addItem(item)
		done, err := p.next(v, ']', "EOF while parsing a list", "expected `,` or `]`")
		if err != nil {
			return nil, err
		}
		if done {
			return v, nil
		}
	}
}

// str reads a JSON string starting at the opening quote and returns its
// decoded text; p.i ends just past the closing quote.
func (p *jsonParser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.data) {
		c := p.data[p.i]
		if c == '"' {
			s := p.text(p.data[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.fail(`control character (\u0000-\u001F) found while parsing a string`)
		}
		p.i++
	}
	var b strings.Builder
	b.Write(p.data[start:p.i])
	for {
		if p.i >= len(p.data) {
			return "", p.fail("EOF while parsing a string")
		}
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.fail(`control character (\u0000-\u001F) found while parsing a string`)
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		p.i++ // backslash
		if p.i >= len(p.data) {
			return "", p.fail("EOF while parsing a string")
		}
		e := p.data[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := p.unicodeEscape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		default:
			p.i--
			return "", p.fail("invalid escape")
		}
	}
}

func (p *jsonParser) hex4() (rune, error) {
	if p.i+4 > len(p.data) {
		p.i = len(p.data)
		return 0, p.fail("EOF while parsing a string")
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := p.data[p.i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.fail("invalid escape")
		}
		r = r<<4 | rune(d)
		p.i++
	}
	return r, nil
}

// unicodeEscape reads the XXXX of \uXXXX (and a following low surrogate).
// serde_json rejects lone surrogates when parsing into owned strings.
func (p *jsonParser) unicodeEscape() (rune, error) {
	r, err := p.hex4()
	if err != nil {
		return 0, err
	}
	switch {
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, p.fail("lone leading surrogate in hex escape")
	case r >= 0xD800 && r <= 0xDBFF:
		if p.i+2 > len(p.data) {
			p.i = len(p.data)
			return 0, p.fail("EOF while parsing a string")
		}
		if p.data[p.i] != '\\' || p.data[p.i+1] != 'u' {
			return 0, p.fail("unexpected end of hex escape")
		}
		p.i += 2
		lo, err := p.hex4()
		if err != nil {
			return 0, err
		}
		if lo < 0xDC00 || lo > 0xDFFF {
			return 0, p.fail("lone leading surrogate in hex escape")
		}
		return utf16.DecodeRune(r, lo), nil
	}
	return r, nil
}

// number reads a JSON number and classifies it as serde_json does: u64 for
// non-negative integer literals that fit, i64 for negative ones that fit
// (but "-0" is the float -0.0), f64 for everything else; an f64 that
// overflows is "number out of range" (lb-config.md §7.2).
// requiredDigits consumes the digits of a fraction or exponent, at least
// one: none is serde_json's "EOF while parsing a value" at the end of the
// input and "invalid number" before any other byte.
func (p *jsonParser) requiredDigits() error {
	n := 0
	for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
		p.i++
		n++
	}
	switch {
	case n > 0:
		return nil
	case p.i >= len(p.data):
		return p.fail("EOF while parsing a value")
	default:
		return p.fail("invalid number")
	}
}

func (p *jsonParser) number() (*Value, error) {
	start := p.i
	neg := false
	if p.data[p.i] == '-' {
		neg = true
		p.i++
	}
	if p.i >= len(p.data) {
		return nil, p.fail("EOF while parsing a value")
	}
	digitsStart := p.i
	switch c := p.data[p.i]; {
	case c == '0':
		p.i++
		if p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
			return nil, p.fail("invalid number")
		}
	case c >= '1' && c <= '9':
		for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
			p.i++
		}
	default:
		return nil, p.fail("invalid number")
	}
	digitsEnd := p.i
	isFloat := false
	if p.i < len(p.data) && p.data[p.i] == '.' {
		isFloat = true
		p.i++
		if err := p.requiredDigits(); err != nil {
			return nil, err
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		isFloat = true
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if err := p.requiredDigits(); err != nil {
			return nil, err
		}
	}
	lit := p.text(p.data[start:p.i])
	v := p.newValue()
	*v = Value{Kind: KindNumber, Text: lit, Start: p.pt.at(start), End: int32(p.i)}
	if !isFloat {
		mag, err := strconv.ParseUint(string(p.data[digitsStart:digitsEnd]), 10, 64)
		if err == nil {
			switch {
			case !neg:
				v.setUint(mag)
				return v, nil
			case mag != 0 && mag <= 1<<63:
				v.setInt(-int64(mag-1) - 1)
				return v, nil
			}
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		end := p.i
		p.i = start
		e := p.fail("number out of range").(*syntaxError)
		// serde_json finds it after reading the whole number.
		e.serdeOff = end - 1
		return nil, e
	}
	v.setFloat(f)
	return v, nil
}
