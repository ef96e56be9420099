package lb

import (
	"fmt"
	"strings"
)

// This file is the RFC 8941 Item parser routing expressions go through:
// the rules and error texts of the sfv crate's Parser (parse_item with
// Version::Rfc8941), which Stargate's expression.rs calls. Only what an
// Item needs is here: bare items and parameters, no lists or
// dictionaries.

// sfvKind is the type of a parsed bare item.
type sfvKind uint8

const (
	sfvInteger sfvKind = iota + 1
	sfvDecimal
	sfvString
	sfvToken
	sfvByteSeq
	sfvBoolean
)

// sfvBare is a parsed bare item; n is an integer or a decimal times 1000,
// text a token or a string's content, raw the input it was read from.
type sfvBare struct {
	kind sfvKind
	n    int64
	text string
	raw  string
}

func (b sfvBare) exprValue() ExprValue {
	v := ExprValue{Int: b.n, Text: b.text, Raw: b.raw}
	switch b.kind {
	case sfvInteger:
		v.Kind = ExprInteger
	case sfvDecimal:
		v.Kind = ExprDecimal
	case sfvToken:
		v.Kind = ExprToken
	case sfvString:
		v.Kind = ExprString
	}
	return v
}

type sfvParam struct {
	key   string
	value sfvBare
}

type sfvItem struct {
	bare   sfvBare
	params []sfvParam
}

// sfvError is sfv's Error: a message and, usually, the byte index where
// parsing stopped ("… at index N").
type sfvError struct {
	msg   string
	index int
}

func (e *sfvError) Error() string { return fmt.Sprintf("%s at index %d", e.msg, e.index) }

type sfvParser struct {
	in string
	i  int
}

func (p *sfvParser) peek() (byte, bool) {
	if p.i < len(p.in) {
		return p.in[p.i], true
	}
	return 0, false
}

func (p *sfvParser) fail(msg string) *sfvError { return &sfvError{msg, p.i} }

// parseSFVItem parses in as one Item: leading and trailing spaces (not
// tabs) are skipped; anything left over is "trailing characters after
// parsed value". Parameters keep their order; a repeated key keeps its
// first position and its last value (IndexMap insert), though routing
// expressions reject repeats before this (P5).
func parseSFVItem(in string) (*sfvItem, *sfvError) {
	p := &sfvParser{in: in}
	p.skipSP()
	bare, err := p.bareItem()
	if err != nil {
		return nil, err
	}
	item := &sfvItem{bare: bare}
	for {
		c, ok := p.peek()
		if !ok || c != ';' {
			break
		}
		p.i++
		p.skipSP()
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		v := sfvBare{kind: sfvBoolean, n: 1}
		if c, ok := p.peek(); ok && c == '=' {
			p.i++
			if v, err = p.bareItem(); err != nil {
				return nil, err
			}
		}
		replaced := false
		for j := range item.params {
			if item.params[j].key == key {
				item.params[j].value, replaced = v, true
			}
		}
		if !replaced {
			item.params = append(item.params, sfvParam{key, v})
		}
	}
	p.skipSP()
	if p.i < len(p.in) {
		return nil, p.fail("trailing characters after parsed value")
	}
	return item, nil
}

func (p *sfvParser) skipSP() {
	for p.i < len(p.in) && p.in[p.i] == ' ' {
		p.i++
	}
}

func (p *sfvParser) bareItem() (sfvBare, *sfvError) {
	start := p.i
	c, ok := p.peek()
	var b sfvBare
	var err *sfvError
	switch {
	case !ok:
		return b, p.fail("expected start of bare item")
	case c == '?':
		p.i++
		switch c, _ := p.peek(); c {
		case '0', '1':
			p.i++
			b = sfvBare{kind: sfvBoolean, n: int64(c - '0')}
		default:
			return b, p.fail("expected boolean ('0' or '1')")
		}
	case c == '"':
		b, err = p.str()
	case c == ':':
		b, err = p.byteSeq()
	case c == '@':
		return b, p.fail("RFC 8941 does not support dates")
	case c == '%':
		return b, p.fail("RFC 8941 does not support display strings")
	case isLetter(c) || c == '*':
		p.i++
		for p.i < len(p.in) && isTokenInner(p.in[p.i]) {
			p.i++
		}
		b = sfvBare{kind: sfvToken, text: p.in[start:p.i]}
	case c == '-' || isDigit(c):
		b, err = p.number()
	default:
		return b, p.fail("expected start of bare item")
	}
	if err != nil {
		return b, err
	}
	b.raw = p.in[start:p.i]
	return b, nil
}

// isTokenInner is a tchar (RFC 9110), ':' or '/'.
func isTokenInner(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~:/", c) >= 0
}

func (p *sfvParser) str() (sfvBare, *sfvError) {
	p.i++ // the opening quote
	var out strings.Builder
	for p.i < len(p.in) {
		c := p.in[p.i]
		switch {
		case c == '"':
			p.i++
			return sfvBare{kind: sfvString, text: out.String()}, nil
		case c < 0x20 || c >= 0x7f:
			return sfvBare{}, p.fail("invalid string character")
		case c == '\\':
			p.i++
			e, ok := p.peek()
			switch {
			case !ok:
				return sfvBare{}, p.fail("unterminated escape sequence")
			case e == '\\' || e == '"':
				p.i++
				out.WriteByte(e)
			default:
				return sfvBare{}, p.fail("invalid escape sequence")
			}
		default:
			p.i++
			out.WriteByte(c)
		}
	}
	return sfvBare{}, p.fail("unterminated string")
}

// byteSeq reads ":base64:". sfv decodes with the standard alphabet,
// padding optional; a value that does not decode is "invalid byte
// sequence". Routing expressions reject byte sequences anyway (P2), so
// only the message of a malformed one depends on the decoding details.
func (p *sfvParser) byteSeq() (sfvBare, *sfvError) {
	p.i++
	start := p.i
	end := strings.IndexByte(p.in[start:], ':')
	if end < 0 {
		p.i = len(p.in)
		return sfvBare{}, p.fail("unterminated byte sequence")
	}
	content := p.in[start : start+end]
	p.i = start + end + 1
	body := strings.TrimRight(content, "=")
	for j := 0; j < len(body); j++ {
		if c := body[j]; !(isLetter(c) || isDigit(c) || c == '+' || c == '/') {
			return sfvBare{}, &sfvError{"invalid byte sequence", start + j}
		}
	}
	if pad := len(content) - len(body); len(body)%4 == 1 || (pad > 0 && (len(content)%4 != 0 || pad > 2)) {
		return sfvBare{}, &sfvError{"invalid byte sequence", max(start+end-1, start)}
	}
	return sfvBare{kind: sfvByteSeq, text: content}, nil
}

// number reads an Integer (≤ 15 digits) or a Decimal (≤ 12 integer digits,
// 1–3 fraction digits), with sfv's messages and indexes.
func (p *sfvParser) number() (sfvBare, *sfvError) {
	neg := false
	if c, _ := p.peek(); c == '-' {
		neg = true
		p.i++
	}
	c, ok := p.peek()
	if !ok || !isDigit(c) {
		return sfvBare{}, p.fail("expected digit")
	}
	p.i++
	mag, digits := int64(c-'0'), 1
	sign := int64(1)
	if neg {
		sign = -1
	}
	for {
		c, ok := p.peek()
		switch {
		case ok && c == '.':
			if digits > 12 {
				return sfvBare{}, p.fail("too many digits before decimal point")
			}
			p.i++
			mag *= 1000
			scale := int64(100)
			for {
				c, ok := p.peek()
				if !ok || !isDigit(c) {
					break
				}
				if scale == 0 {
					return sfvBare{}, p.fail("too many digits after decimal point")
				}
				p.i++
				mag += int64(c-'0') * scale
				scale /= 10
			}
			if scale == 100 {
				return sfvBare{}, &sfvError{"trailing decimal point", p.i - 1}
			}
			return sfvBare{kind: sfvDecimal, n: sign * mag}, nil
		case ok && isDigit(c):
			digits++
			if digits > 15 {
				return sfvBare{}, p.fail("too many digits")
			}
			p.i++
			mag = mag*10 + int64(c-'0')
		default:
			return sfvBare{kind: sfvInteger, n: sign * mag}, nil
		}
	}
}

// key reads a parameter key: lcalpha or '*', then lcalpha, digits, '_',
// '-', '.', '*'.
func (p *sfvParser) key() (string, *sfvError) {
	c, ok := p.peek()
	if !ok || !(c >= 'a' && c <= 'z' || c == '*') {
		return "", p.fail("expected start of key ('a'-'z' or '*')")
	}
	start := p.i
	p.i++
	for p.i < len(p.in) {
		c := p.in[p.i]
		if !(c >= 'a' && c <= 'z' || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*') {
			break
		}
		p.i++
	}
	return p.in[start:p.i], nil
}
