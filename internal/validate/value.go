package validate

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Format is the syntax a document was decoded from.
type Format uint8

// Input formats. Stargate itself reads only JSON (lb-config.md §2.3); YAML
// is an lcctl convenience mapped onto the JSON data model (§7.4).
const (
	// FormatUnknown is the zero value: nothing was decoded.
	FormatUnknown Format = iota
	// FormatJSON is JSON decoded with serde_json's rules.
	FormatJSON
	// FormatYAML is a single YAML 1.2 document.
	FormatYAML
)

// String returns "json", "yaml" or "unknown".
func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatYAML:
		return "yaml"
	}
	return "unknown"
}

// MarshalText renders the String form (used by JSON output).
func (f Format) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Kind is the JSON data-model type of a Value.
type Kind uint8

// Value kinds, one per JSON type. KindInvalid marks a YAML value with no
// JSON form (a special float, an unsupported tag); a diagnostic has already
// been reported for it and the rules do not type it again.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindObject
	KindArray
)

var kindNames = [...]string{"invalid", "null", "boolean", "number", "string", "object", "array"}

// String returns the JSON type name ("object", "string", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// NumberType is how serde_json (without arbitrary_precision) holds a JSON
// number: an unsigned integer, a negative integer, or a float
// (lb-config.md §7.2). The type decides which fields accept the number.
type NumberType uint8

// Number types.
const (
	// NumUint is an integer literal 0 … 18446744073709551615 (u64).
	NumUint NumberType = iota
	// NumInt is a negative integer literal −9223372036854775808 … −1 (i64).
	NumInt
	// NumFloat is every other number: a fraction or exponent, "-0", or an
	// integer outside the u64/i64 ranges (f64).
	NumFloat
)

// Pos is a position in the source bytes.
type Pos struct {
	// Offset is the 0-based byte offset.
	Offset int
	// Line is 1-based; Col is the 1-based column counted in characters
	// (Unicode code points; a tab counts as one). Zero means unknown.
	Line, Col int
}

// Value is one node of the positioned document tree, the same for JSON and
// YAML input. Objects keep every member in document order, duplicates
// included, because Stargate's duplicate-key rules (lb-config.md §7.3,
// D1–D5) depend on them and migrate splices edits into the original bytes.
type Value struct {
	// Kind is the JSON type.
	Kind Kind
	// Number is how a number is held when Kind is KindNumber.
	Number NumberType
	// Text is the decoded text of a string, the literal of a number
	// ("2.0", "-0", "0x1F" in YAML), "true"/"false" or "null".
	Text string
	// Uint is the value of a NumUint number.
	Uint uint64
	// Int is the value of a NumInt number.
	Int int64
	// Float is the f64 reading of every number (the value of a NumFloat
	// number; what number fields such as max_input_work_seconds use).
	Float float64
	// Start is the position of the value's first byte.
	Start Pos
	// End is the byte offset just past the value's last byte for JSON
	// input; -1 for YAML (edit the yaml.Node instead).
	End int
	// Members are an object's entries in document order, duplicates kept.
	Members []Member
	// Items are an array's elements.
	Items []*Value
	// Node is the YAML node this value came from (nil for JSON). For a
	// value reached through an alias it is the anchored node.
	Node *yaml.Node
}

// Member is one key/value pair of an object.
type Member struct {
	// Key is the decoded key text.
	Key string
	// KeyStart is the position of the key's first byte (its opening quote
	// in JSON).
	KeyStart Pos
	// KeyEnd is the byte offset just past the key's closing quote (-1 for
	// YAML).
	KeyEnd int
	// Value is the member's value.
	Value *Value
	// KeyNode is the YAML key node (nil for JSON).
	KeyNode *yaml.Node
}

// Get returns the value of the last member named key (serde_json's
// last-wins reading of an object, rule D3), or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != KindObject {
		return nil
	}
	for i := len(v.Members) - 1; i >= 0; i-- {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// IsNull reports whether v is absent (nil) or JSON null; serde reads both
// as "not set" for Option fields (lb-config.md §7.1).
func (v *Value) IsNull() bool { return v == nil || v.Kind == KindNull }

// maxQuotedRunes bounds how much of a string value a message quotes.
const maxQuotedRunes = 120

// describe renders the value the way serde's Unexpected does in error
// messages: "string \"x\"", "integer `5`", "floating point `2.0`",
// "boolean `true`", "null", "map", "sequence".
func (v *Value) describe() string {
	switch v.Kind {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean `" + v.Text + "`"
	case KindString:
		if r := []rune(v.Text); len(r) > maxQuotedRunes {
			// Stargate would print it whole; a message quoting a whole
			// file (a text given as an lb-config) helps nobody.
			return "string " + rustDebugString(string(r[:maxQuotedRunes])) + fmt.Sprintf("… (%d characters)", len(r))
		}
		return "string " + rustDebugString(v.Text)
	case KindObject:
		return "map"
	case KindArray:
		return "sequence"
	case KindNumber:
		switch v.Number {
		case NumUint:
			return "integer `" + strconv.FormatUint(v.Uint, 10) + "`"
		case NumInt:
			return "integer `" + strconv.FormatInt(v.Int, 10) + "`"
		default:
			return "floating point `" + serdeJSONFloat(v.Float) + "`"
		}
	}
	return "value"
}

// Document is one decoded lb-config file.
type Document struct {
	// File is the name diagnostics use ("-" or "<stdin>" for standard input).
	File string
	// Format is the syntax the document was decoded from.
	Format Format
	// Source is the input as given.
	Source []byte
	// Root is the top-level value; nil when decoding failed.
	Root *Value
	// YAML is the yaml.v3 document node (nil for JSON), for comment-keeping
	// rewrites.
	YAML *yaml.Node
}
