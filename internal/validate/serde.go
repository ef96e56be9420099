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
// escapes \t \r \n \\ \" \0, and \u{X} for other non-printable characters.
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
			if r < 0x20 || r == 0x7f || (r >= 0x80 && !unicode.IsPrint(r)) {
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

// rustFloatDecimal is serde's rendering of a float in "invalid type:
// floating point `X`" messages: Display plus ".0" when no decimal point was
// written ("2.0", "-0.0", "18446744073709552000.0").
func rustFloatDecimal(f float64) string {
	s := rustFloatDisplay(f)
	if math.IsInf(f, 0) || math.IsNaN(f) || strings.Contains(s, ".") {
		return s
	}
	return s + ".0"
}
