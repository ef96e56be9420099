package validate

import (
	"github.com/lcctl/lcctl/internal/lb"
)

// EntryRole says where an entry sits in an lb-config (lb-config.md §1).
type EntryRole uint8

// Entry roles.
const (
	// RoleDefault is the top-level `default` (string form only).
	RoleDefault EntryRole = iota + 1
	// RoleModel is a value of `models` (active).
	RoleModel
	// RoleRequestAlgorithm is a value of the top-level `request_algorithms`
	// (active).
	RoleRequestAlgorithm
	// RoleModelRequestAlgorithm is a value of a detailed `models` entry's
	// `request_algorithms` (model-level; active).
	RoleModelRequestAlgorithm
	// RoleDiscarded is an entry inside the `request_algorithms` of a
	// `request_algorithms` entry, at any depth: parsed, then dropped (W4).
	RoleDiscarded
)

// roleNames are the roles' JSON names; RoleDefault's is the key of the
// entry it names (lb.TopLevelDefault), the others name what the entry is.
var roleNames = [...]string{"", lb.TopLevelDefault, "model", "request_algorithm", "model_request_algorithm", "discarded"}

// String returns the role's JSON name ("model", "request_algorithm", ...).
func (r EntryRole) String() string {
	if int(r) < len(roleNames) && r != 0 {
		return roleNames[r]
	}
	return "unknown"
}

// MarshalText renders the String form.
func (r EntryRole) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Entry is one algorithm entry of the document (or `default`), as found,
// whether or not it is valid. Migrate and preflight use entries to find
// what to rewrite; the engine uses Result.Config instead.
type Entry struct {
	// Role is where the entry sits.
	Role EntryRole
	// Path is the JSON path of the entry value (`models["m"]`).
	Path string
	// Model is the models key for RoleModel and RoleModelRequestAlgorithm.
	Model string
	// Key is the request_algorithms key as written (request-algorithm roles).
	Key string
	// KeyAlgorithm is Key resolved (0 when Key is not an algorithm name).
	KeyAlgorithm lb.Algorithm
	// Value is the entry's value node (a string or an object); for
	// RoleDefault the `default` value.
	Value *Value
	// Parent is the entry whose request_algorithms holds this one.
	Parent *Entry
	// Active reports whether Stargate builds a load balancer from the entry
	// (models, top-level and model-level request_algorithms winners) or, for
	// RoleDefault, whether `default` is set.
	Active bool
	// Shadowed reports that a duplicate key elsewhere wins over this
	// occurrence (D2, D4); shadowed entries are parsed but never used.
	Shadowed bool
	// Algorithm is the entry's algorithm, 0 when it could not be read.
	Algorithm lb.Algorithm
	// Spelling is the algorithm name as written when it differs from the
	// canonical name.
	Spelling string
	// StringForm reports an entry written as a bare algorithm name.
	StringForm bool
	// Parsed reports that the entry itself passes V8–V18 (nested entries
	// are judged on their own).
	Parsed bool
	// Config is the normalised entry (defaults applied), set whenever the
	// algorithm is known; when Parsed is false it holds only the fields
	// that typed correctly. Its RequestAlgorithms holds the model-level
	// winners for RoleModel.
	Config *lb.AlgorithmConfig
	// NoSLO reports a no-SLO pulsar-wait-and-widen entry by M1 within the
	// M16 scope: active (or `default`), parsed, not shadowed, algorithm
	// pulsar-wait-and-widen, and not both queue-SLO bounds set.
	NoSLO bool
	// Bounded reports, for a NoSLO detailed entry, that both `max_queued`
	// and `cache_affinity_wait_ms` are present and non-null (M4).
	Bounded bool

	// present maps each field set to a non-null value to its value.
	present present
	// children are the entries of this entry's request_algorithms.
	children []*Entry
}

// Result is the outcome of validating one lb-config.
type Result struct {
	// File is the name used in diagnostics.
	File string
	// Format is the syntax the file was read as.
	Format Format
	// Doc is the decoded document (Doc.Root nil when decoding failed).
	Doc *Document
	// Config is the typed, normalised config; nil when any error was
	// found. Duplicates are resolved the way Stargate resolves them.
	Config *lb.Config
	// Diagnostics are every finding, sorted by position.
	Diagnostics []Diagnostic
	// Entries are every entry of the document in document order
	// (`default` first when present), shadowed and discarded ones included.
	Entries []*Entry
	// Counts tallies Diagnostics by severity.
	Counts Counts
}

// Valid reports whether Stargate would start with this config: the file
// decoded and no error was found.
func (r *Result) Valid() bool {
	return r.Doc != nil && r.Doc.Root != nil && r.Counts.Errors == 0
}

// Unreadable reports whether the input could not be decoded at all (LC1000,
// LC1001, or a YAML problem that stops conversion); `lcctl validate` exits 2
// for such files.
func (r *Result) Unreadable() bool { return r.Doc == nil || r.Doc.Root == nil }

// NoSLO returns the no-SLO pulsar-wait-and-widen entries (M1 within the M16
// scope): `default` naming pwaw and every active, parsed, winning pwaw entry
// without both queue-SLO bounds — also when the file is rejected for other
// reasons. Entries with Bounded set are M4 ("already bounded").
func (r *Result) NoSLO() []*Entry {
	var out []*Entry
	for _, e := range r.Entries {
		if e.NoSLO {
			out = append(out, e)
		}
	}
	return out
}

// Errors returns the error diagnostics.
func (r *Result) Errors() []Diagnostic {
	var out []Diagnostic
	for _, d := range r.Diagnostics {
		if d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}
