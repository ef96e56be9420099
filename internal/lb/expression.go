package lb

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file parses routing expressions, x-routing-method values with
// parameters such as "pulsar;seed=stable-a;consider_kv_free_tokens=true"
// (lb-config.md §12; docs/engine.md "Routing expressions"). It reproduces
// Stargate's RoutingExpression (load_balancer/expression.rs, index commit
// 4babf29a): the P-rule checks on the raw text, then an RFC 8941 Item
// parse with the rules of the sfv crate (Parser::parse_item,
// Version::Rfc8941), then the type checks, then the overlay of each
// parameter on the resolved base config, with upstream's rejection
// classes and message texts.

// ExprKind is the RFC 8941 type of a routing-expression parameter value.
type ExprKind uint8

// The value kinds a routing expression can hold after parsing.
const (
	// ExprInteger is an RFC 8941 Integer (at most 15 digits).
	ExprInteger ExprKind = iota + 1
	// ExprDecimal is an RFC 8941 Decimal (≤ 12 integer, 1–3 fraction digits).
	ExprDecimal
	// ExprToken is an RFC 8941 Token (starts with a letter or '*').
	ExprToken
	// ExprString is an RFC 8941 String ("…", with \" and \\ escapes).
	ExprString
)

var exprKindNames = [...]string{ExprInteger: "integer", ExprDecimal: "decimal", ExprToken: "token", ExprString: "string"}

// String names the kind ("integer", "decimal", "token", "string").
func (k ExprKind) String() string {
	if int(k) < len(exprKindNames) && exprKindNames[k] != "" {
		return exprKindNames[k]
	}
	return "invalid"
}

// ExprValue is one parsed parameter value.
type ExprValue struct {
	// Kind is the RFC 8941 type.
	Kind ExprKind
	// Int is the value of an integer, or a decimal times 1000 (sfv keeps
	// decimals as integers scaled by 1000).
	Int int64
	// Text is a token or the unescaped content of a string.
	Text string
	// Raw is the value as written in the header (quotes and escapes kept).
	Raw string
}

// ExprParam is one key=value parameter, in header order.
type ExprParam struct {
	// Key is the parameter name ([a-z][a-z0-9_]*, rule P6).
	Key string
	// Value is the parsed value.
	Value ExprValue
}

// RoutingExpression is a parsed routing expression (lb-config.md §12 X1,
// X2; expression.rs RoutingExpression::parse).
type RoutingExpression struct {
	// Raw is the header value as received (Stargate's `requested`).
	Raw string
	// Token is the algorithm token as written ("PULSAR_WAIT_AND_WIDEN").
	Token string
	// Algorithm is the token's algorithm after H9 normalisation.
	Algorithm Algorithm
	// Params are the parameters in header order (keys are unique).
	Params []ExprParam
}

// ParamChange is what one parameter did to the base config: the field's
// value before and after, as lb-config text ("unset" for an optional field
// without a value).
type ParamChange struct {
	// Key is the parameter; Value is written as in the header.
	Key, Value string
	// Before and After are the field's value in the base config and after
	// the parameter was applied.
	Before, After string
}

// Routing-expression limits (P7, P11).
const (
	maxExpressionBytes  = 1024
	maxExpressionParams = 32
)

// exprReject is a rejection of raw with Stargate's class and message; rule
// is the P-rule label the message starts with ("" when none).
func exprReject(class, rule, raw, message string) *RoutingError {
	return &RoutingError{Status: 400, Code: class, Header: "x-routing-method", Message: message, Rule: rule, Requested: raw}
}

func exprMalformed(rule, raw, format string, args ...any) *RoutingError {
	return exprReject("malformed_expression", rule, raw, fmt.Sprintf(format, args...))
}

// ParseRoutingExpression parses an x-routing-method value as Stargate's
// RoutingExpression::parse does. The checks run in upstream's order:
// P7 (more than 1024 bytes), P3 (a ','), P9 (a ';' inside a string), then
// per ';'-separated parameter P11 (a 33rd parameter), P4 (no '='), P6 (a
// key that is not [a-z][a-z0-9_]*) and P5 (a repeated key); then the RFC
// 8941 Item parse (message "RFC 8941 (P1/P2/P4/P8): <sfv error> at index
// N"), P1 (the item is not a token), P10 (the token has characters other
// than letters, digits, '_' and '-', or does not start with a letter), P4
// (a ?1/?0 boolean value), P2 (a byte sequence); finally the token's
// algorithm (unknown_method). Errors are *RoutingError with class
// malformed_expression or unknown_method, Rule set and Requested = raw.
func ParseRoutingExpression(raw string) (*RoutingExpression, *RoutingError) {
	if len(raw) > maxExpressionBytes {
		return nil, exprMalformed("P7", raw, "P7: expression exceeds %d bytes", maxExpressionBytes)
	}
	if strings.IndexByte(raw, ',') >= 0 {
		return nil, exprMalformed("P3", raw, "P3: commas are not allowed")
	}
	// A ';' inside a quoted string, with \-escapes honoured.
	quoted, escaped := false, false
	for i := 0; i < len(raw); i++ {
		switch b := raw[i]; {
		case escaped:
			escaped = false
		case quoted && b == '\\':
			escaped = true
		case b == '"':
			quoted = !quoted
		case quoted && b == ';':
			return nil, exprMalformed("P9", raw, "P9: semicolons in strings are not allowed")
		}
	}
	keys := make([]string, 0, 8)
	for _, p := range strings.Split(raw, ";")[1:] {
		if len(keys) == maxExpressionParams {
			return nil, exprMalformed("P11", raw, "P11: expression exceeds %d parameters", maxExpressionParams)
		}
		key, _, ok := strings.Cut(strings.TrimLeft(p, " "), "=")
		if !ok {
			return nil, exprMalformed("P4", raw, "P4: parameter %s requires an explicit value", rustDebugString(p))
		}
		if !validExprKey(key) {
			return nil, exprMalformed("P6", raw, "P6: invalid parameter key %s", rustDebugString(key))
		}
		for _, k := range keys {
			if k == key {
				return nil, exprMalformed("P5", raw, "P5: duplicate parameter key %s", rustDebugString(key))
			}
		}
		keys = append(keys, key)
	}
	item, err := parseSFVItem(raw)
	if err != nil {
		return nil, exprMalformed("RFC 8941", raw, "RFC 8941 (P1/P2/P4/P8): %s", err)
	}
	if item.bare.kind != sfvToken {
		return nil, exprMalformed("P1", raw, "P1: routing method must be a token")
	}
	token := item.bare.text
	if !validAlgorithmToken(token) {
		return nil, exprMalformed("P10", raw, "P10: invalid algorithm token %s", rustDebugString(token))
	}
	e := &RoutingExpression{Raw: raw, Token: token}
	for _, p := range item.params {
		switch p.value.kind {
		case sfvBoolean:
			return nil, exprMalformed("P4", raw, "P4: %s takes true or false, not ?1 or ?0", p.key)
		case sfvInteger, sfvDecimal, sfvToken, sfvString:
		default:
			return nil, exprMalformed("P2", raw, "P2: unsupported type for %s", p.key)
		}
		e.Params = append(e.Params, ExprParam{Key: p.key, Value: p.value.exprValue()})
	}
	a, ok := methodNames[NormalizeRoutingMethod(token)]
	if !ok {
		return nil, exprReject("unknown_method", "", raw, fmt.Sprintf("unknown routing method '%s'", strings.TrimSpace(token)))
	}
	e.Algorithm = a
	return e, nil
}

// validExprKey is the P6 key rule: [a-z][a-z0-9_]*.
func validExprKey(k string) bool {
	if k == "" || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || isDigit(c) || c == '_') {
			return false
		}
	}
	return true
}

// validAlgorithmToken is the P10 rule: a letter, then letters, digits,
// '_' and '-'.
func validAlgorithmToken(t string) bool {
	if t == "" || !isLetter(t[0]) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(isLetter(c) || isDigit(c) || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// rustDebugString renders s as Rust's {:?} does for a str: in double
// quotes, with \", \\, \t, \r, \n, \0 and other control characters as
// \u{…} escaped.
func rustDebugString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == 0:
			b.WriteString(`\0`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Overlay applies the parameters to c, a copy of the resolved base config,
// in header order, as expression.rs overlay does: for each parameter the
// applicability (unknown_parameter "unknown parameter 'K' for algorithm
// ALG", not_applicable "K is not applicable to ALG"), then the value
// (invalid_value "K: …", inert_value "K must be positive"); after all of
// them, a queue-SLO bound set without the other in the result is
// inert_combination. The applicable parameters and the field each sets
// come from the field registry (fields.go). It returns what each
// parameter changed, up to the rejected one when there is an error.
func (e *RoutingExpression) Overlay(c *AlgorithmConfig) ([]ParamChange, *RoutingError) {
	a := c.Algorithm
	changes := make([]ParamChange, 0, len(e.Params))
	slo := false
	for _, p := range e.Params {
		f := FieldByName(p.Key)
		if f == nil || f.Expression == 0 || f.Name != p.Key {
			return changes, exprReject("unknown_parameter", "", e.Raw, fmt.Sprintf("unknown parameter '%s' for algorithm %s", p.Key, a))
		}
		if !f.Expression.Has(a) {
			return changes, exprReject("not_applicable", "", e.Raw, fmt.Sprintf("%s is not applicable to %s", p.Key, a))
		}
		before := fieldText(c, f)
		if msg, class := e.apply(c, f, p.Value); msg != "" {
			return changes, exprReject(class, "", e.Raw, msg)
		}
		after := fieldText(c, f)
		changes = append(changes, ParamChange{Key: p.Key, Value: p.Value.Raw, Before: before, After: after})
		slo = slo || f == FieldMaxQueueTimeFloorMs || f == FieldMaxQueueTimeCeilMs
	}
	if slo && !c.HasQueueSLO() {
		return changes, exprReject("inert_combination", "", e.Raw, fmt.Sprintf("%s and %s must both be configured",
			FieldMaxQueueTimeFloorMs.Name, FieldMaxQueueTimeCeilMs.Name))
	}
	return changes, nil
}

// fieldText is f's value in c as lb-config text; "unset" for an optional
// field without a value (an empty seed is Stargate's None).
func fieldText(c *AlgorithmConfig, f *Field) string {
	s, ok := f.Text(c)
	if !ok || (f.Type == TypeString && s == "") {
		return "unset"
	}
	return s
}

// apply checks one value against its field (X4) and stores it; it returns
// Stargate's message and class on a rejection ("" when applied).
func (e *RoutingExpression) apply(c *AlgorithmConfig, f *Field, v ExprValue) (msg, class string) {
	invalid := func(format string, args ...any) (string, string) {
		return f.Name + ": " + fmt.Sprintf(format, args...), "invalid_value"
	}
	inert := func() (string, string) { return f.Name + " must be positive", "inert_value" }
	text := v.Kind == ExprToken || v.Kind == ExprString
	switch f.Type {
	case TypeBool:
		switch {
		case !text:
			return invalid("expected a token or string")
		case v.Text != "true" && v.Text != "false":
			return invalid("expected true or false")
		}
		f.SetBool(c, v.Text == "true")
	case TypeString:
		if !text {
			return invalid("expected a token or string")
		}
		f.SetString(c, v.Text)
	case TypeComparator:
		if !text {
			return invalid("expected a token or string")
		}
		cmp, ok := ParseComparator(v.Text)
		if !ok {
			return invalid("unknown comparator")
		}
		f.SetComparator(c, cmp)
	case TypeF64:
		x, ok, plain := v.decimal()
		switch {
		case !plain:
			return invalid("expected a number or quoted plain number")
		case !ok:
			return invalid("expected a finite decimal")
		case f.ExprPositive && !(x > 0):
			return inert()
		case f.Range != nil && !f.Range.Contains(x):
			return invalid("must be between %s and %s", rustFloatLiteral(f.Range.Min), rustFloatLiteral(f.Range.Max))
		}
		f.SetFloat(c, x)
	case TypeU64, TypeUsize:
		n, ok, integral := v.unsigned()
		switch {
		case !integral:
			return invalid("expected an integer or quoted integer")
		case !ok:
			return invalid("expected an unsigned integer in range")
		case f.Range != nil && !f.Range.Contains(float64(n)):
			return invalid("must be between %d and %d", uint64(f.Range.Min), uint64(f.Range.Max))
		case f.ExprPositive && n == 0:
			return inert()
		case f.ExprMax != 0 && n > f.ExprMax:
			return invalid("must be at most %d", f.ExprMax)
		}
		f.SetUint(c, n)
	default:
		return invalid("unsupported parameter")
	}
	return "", ""
}

// rustFloatLiteral writes a bound as upstream's message does ("0.0", "1.0").
func rustFloatLiteral(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// decimal is expression.rs Parameter::decimal: an integer, a decimal, or a
// string holding a plain number (optional sign, digits, optionally '.' and
// digits; no exponent, inf or NaN) read as Rust's f64::from_str does.
// plain is false for any other value; ok is false when the number is not
// finite (a quoted 400-digit number).
func (v ExprValue) decimal() (x float64, ok, plain bool) {
	switch v.Kind {
	case ExprInteger:
		x = float64(v.Int)
	case ExprDecimal:
		x = float64(v.Int) / 1000.0 // sfv's f64::from(Decimal)
	case ExprString:
		if !isPlainNumber(v.Text) {
			return 0, false, false
		}
		x, _ = strconv.ParseFloat(v.Text, 64) // ±Inf on overflow, as Rust
	default:
		return 0, false, false
	}
	return x, !math.IsInf(x, 0) && !math.IsNaN(x), true
}

// unsigned is expression.rs Parameter::unsigned for u64/usize fields: a
// non-negative integer, or a string holding a plain number that Rust's
// u64::from_str accepts (an optional '+', then digits, at most 2⁶⁴−1).
// integral is false for tokens, decimals and other strings; ok is false
// for a negative integer or a string u64::from_str refuses.
func (v ExprValue) unsigned() (n uint64, ok, integral bool) {
	switch v.Kind {
	case ExprInteger:
		if v.Int < 0 {
			return 0, false, true
		}
		return uint64(v.Int), true, true
	case ExprString:
		if !isPlainNumber(v.Text) {
			return 0, false, false
		}
		s := strings.TrimPrefix(v.Text, "+")
		if !allDigits(s) {
			return 0, false, true // a '-' or a fraction
		}
		n, err := strconv.ParseUint(s, 10, 64)
		return n, err == nil, true
	}
	return 0, false, false
}

// isPlainNumber is expression.rs is_plain_number: an optional '+' or '-',
// one or more digits, optionally '.' and one or more digits.
func isPlainNumber(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	return allDigits(whole) && (!dot || allDigits(frac))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
