package validate

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// This file renders values the way Stargate's error messages do, so lcctl
// messages contain Stargate's text (lb-config.md introduction and §8): serde
// describes unexpected values with Rust's Display/Debug formatting.

// rustDebugString quotes s like Rust's `{:?}` for str: double quotes, the
// escapes \t \r \n \\ \" \0, and \u{X} for other non-printable characters
// and for combining marks.
func rustDebugString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case 0:
			b.WriteString(`\0`)
		default:
			if r < 0x20 || r == 0x7f || (r >= 0x80 && (!unicode.IsPrint(r) || graphemeExtend(r))) {
				b.WriteString(`\u{`)
				b.WriteString(strconv.FormatInt(int64(r), 16))
				b.WriteByte('}')
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// graphemeExtend reports Unicode's Grapheme_Extend property (Mn, Me and
// Other_Grapheme_Extend): Rust's Debug for str escapes such characters
// (combining marks) as \u{X} although they are printable.
func graphemeExtend(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Other_Grapheme_Extend)
}

// rustFloatDisplay formats f like Rust's `{}` for f64: the shortest digits
// that read back as f, never in exponent form ("1.5", "2", "-0", "inf",
// "NaN"). Stargate's V16/V17 messages use it ("got 1.5").
func rustFloatDisplay(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// serdeJSONFloat renders f the way serde_json's error messages do
// ("invalid type: floating point `X`"): serde_json 1.0.150 formats the
// float with ryu (serde_json src/error.rs, JsonUnexpected), not with Rust's
// Display. ryu writes the shortest digits that read back as f, in plain
// notation when the value is below 1e16 and not below 1e-5 ("2.0", "-0.0",
// "1000.0", "0.00001"), and in scientific notation otherwise ("1e16",
// "1.8446744073709552e19", "1e-7").
func serdeJSONFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	var b strings.Builder
	if math.Signbit(f) {
		b.WriteByte('-')
	}
	if f == 0 {
		b.WriteString("0.0")
		return b.String()
	}
	// Shortest round-trip digits d.ddd and the decimal exponent.
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, 64)
	i := strings.IndexByte(s, 'e')
	digits := strings.Replace(s[:i], ".", "", 1)
	exp, _ := strconv.Atoi(s[i+1:])
	n := len(digits)
	kk := exp + 1 // 10^(kk-1) <= |f| < 10^kk
	switch {
	case kk-n >= 0 && kk <= 16: // 1234e7 -> 12340000000.0
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", kk-n))
		b.WriteString(".0")
	case kk > 0 && kk <= 16: // 1234e-2 -> 12.34
		b.WriteString(digits[:kk])
		b.WriteByte('.')
		b.WriteString(digits[kk:])
	case kk > -5 && kk <= 0: // 1234e-6 -> 0.001234
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -kk))
		b.WriteString(digits)
	case n == 1: // 1e30
		b.WriteString(digits)
		b.WriteByte('e')
		b.WriteString(strconv.Itoa(kk - 1))
	default: // 1234e30 -> 1.234e33
		b.WriteString(digits[:1])
		b.WriteByte('.')
		b.WriteString(digits[1:])
		b.WriteByte('e')
		b.WriteString(strconv.Itoa(kk - 1))
	}
	return b.String()
}
