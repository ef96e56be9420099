package validate

import (
	"fmt"
	"math"
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

// Pos is a position in the source bytes. Its fields are 32-bit, which
// holds every position of a text lcctl decodes (inputs are at most
// MaxInputBytes, 16 MiB; a rewritten text a small multiple of that) and
// keeps a value and a member 12 bytes smaller each (a decoded tree holds
// one Pos per value and per member: 1.3 million of them for a
// 124,000-model config and its migration).
type Pos struct {
	// Offset is the 0-based byte offset.
	Offset int32
	// Line is 1-based; Col is the 1-based column counted in characters
	// (Unicode code points; a tab counts as one). Zero means unknown.
	Line, Col int32
}

// MakePos returns the Pos of byte offset off at line and col (as Pos
// counts them); a value that does not fit 32 bits becomes unknown (-1
// for the offset, 0 for the line and column).
func MakePos(off, line, col int) Pos {
	fit := func(x, unknown int) int32 {
		if x > math.MaxInt32 || x < math.MinInt32 {
			return int32(unknown)
		}
		return int32(x)
	}
	return Pos{Offset: fit(off, -1), Line: fit(line, 0), Col: fit(col, 0)}
}

// Value is one node of the positioned document tree, the same for JSON and
// YAML input. Objects keep every member in document order, duplicates
// included, because Stargate's duplicate-key rules (lb-config.md §7.3,
// D1–D5) depend on them and migrate splices edits into the original bytes.
//
// A decoded tree holds one Value per JSON value (425,000 for a
// 124,000-model config), so its fields are laid out to take 88 bytes:
// 32-bit positions, a number's reading kept in one word (Uint, Int and
// Float read it), an array's items behind a pointer (Items).
type Value struct {
	// Kind is the JSON type.
	Kind Kind
	// Number is how a number is held when Kind is KindNumber.
	Number NumberType
	// Start is the position of the value's first byte.
	Start Pos
	// End is the byte offset just past the value's last byte for JSON
	// input; -1 for YAML (edit the yaml.Node instead).
	End int32
	// Text is the decoded text of a string, the literal of a number
	// ("2.0", "-0", "0x1F" in YAML), "true"/"false" or "null".
	Text string
	// num is the number's reading: the u64 of a NumUint number, the i64
	// bits of a NumInt one, the f64 bits of a NumFloat one; 0 for every
	// other value.
	num uint64
	// Members are an object's entries in document order, duplicates kept.
	Members []Member
	// items are an array's elements (Items), behind a pointer: arrays are
	// rare in an lb-config, and a slice header in every value was 16
	// bytes more per value.
	items *[]*Value
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
	KeyEnd int32
	// Value is the member's value.
	Value *Value
	// KeyNode is the YAML key node (nil for JSON).
	KeyNode *yaml.Node
}

// Items returns an array's elements in order (nil for every other
// value and for an empty JSON array).
func (v *Value) Items() []*Value {
	if v.items == nil {
		return nil
	}
	return *v.items
}

// addItem appends an element to an array.
func (v *Value) addItem(it *Value) {
	if v.items == nil {
		v.items = new([]*Value)
	}
	*v.items = append(*v.items, it)
}

// Uint is the value of a NumUint number, 0 for every other value.
func (v *Value) Uint() uint64 {
	if v.Number != NumUint {
		return 0
	}
	return v.num
}

// Int is the value of a NumInt number, 0 for every other value.
func (v *Value) Int() int64 {
	if v.Number != NumInt {
		return 0
	}
	return int64(v.num)
}

// Float is the f64 reading of every number (the value of a NumFloat
// number; what number fields such as max_input_work_seconds use; an
// integer converted as serde_json's as_f64 does), 0 for every other
// value.
func (v *Value) Float() float64 {
	switch v.Number {
	case NumFloat:
		return math.Float64frombits(v.num)
	case NumInt:
		return float64(int64(v.num))
	}
	return float64(v.num)
}

// setUint, setInt and setFloat make v a number of that type with that
// reading.
func (v *Value) setUint(u uint64) { v.Number, v.num = NumUint, u }

func (v *Value) setInt(i int64) { v.Number, v.num = NumInt, uint64(i) }

func (v *Value) setFloat(f float64) { v.Number, v.num = NumFloat, math.Float64bits(f) }

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
			return "integer `" + strconv.FormatUint(v.Uint(), 10) + "`"
		case NumInt:
			return "integer `" + strconv.FormatInt(v.Int(), 10) + "`"
		default:
			return "floating point `" + serdeJSONFloat(v.Float()) + "`"
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
