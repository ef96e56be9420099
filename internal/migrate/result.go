package migrate

import (
	"encoding/json"

	"github.com/lcctl/lcctl/internal/validate"
)

// Status is the outcome of migrating one file.
type Status string

// Statuses. Only StatusPending carries an Output that differs from the
// input; every other status means "write nothing".
const (
	// StatusUnchanged: nothing to migrate (no no-SLO entry in scope, or
	// every one is already bounded, M4).
	StatusUnchanged Status = "unchanged"
	// StatusPending: Output holds the migrated file; it passed validation.
	StatusPending Status = "changes_pending"
	// StatusRefused: at least one entry in scope cannot be migrated with
	// these options (M7, M9, M14, a YAML layout lcctl does not rewrite);
	// Notes say why.
	StatusRefused Status = "refused"
	// StatusInvalid: the rewritten file would not pass startup validation
	// (M12); Errors lists why.
	StatusInvalid Status = "invalid_result"
	// StatusUnreadable: the input is not a JSON or YAML document lcctl can
	// decode; Errors lists why.
	StatusUnreadable Status = "unreadable"
	// StatusNotLBConfig: the input decodes, but its top level is not an
	// lb-config object: a number, null, a string, a list of the wrong
	// shape (V2), or an object with a duplicate top-level field (V4), which
	// Stargate's serde decoding rejects before it looks at any entry;
	// Errors lists why. lcctl validate reports the same errors.
	StatusNotLBConfig Status = "not_lb_config"
)

// Severity of a Note.
type Severity string

// Note severities. An error note means the file is not migrated.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Note is a finding about one place in the file that is not itself a
// change: a refusal (error), a consequence the operator should know
// (warning) or an entry left alone on purpose (info).
type Note struct {
	// Severity is error, warning or info.
	Severity Severity `json:"severity"`
	// Rule is the lb-config.md rule ("M4", "M7", ...), "" for lcctl-only
	// findings (YAML layouts).
	Rule string `json:"rule"`
	// Path is the JSON path of the entry, "" for the whole file.
	Path string `json:"path"`
	// Message says what and why.
	Message string `json:"message"`
	// Hint says what to do, "" when nothing.
	Hint string `json:"hint"`
}

// Change is one rewritten or added entry (M15).
type Change struct {
	// Path is the JSON path of the entry, e.g. `models["m"]` or
	// `models["m"].request_algorithms["pulsar-wait-and-widen"]`.
	Path string `json:"path"`
	// Rule is the migration rule applied: M5 (bounded), M6 (pulsar),
	// M8 (header entry added), M9 (`default`: switched to pulsar, or a
	// bounded models entry written for a default-routed model).
	Rule string `json:"rule"`
	// Action is bound, switch_to_pulsar, add_header_entry, switch_default
	// or pin_default_model.
	Action string `json:"action"`
	// AlgorithmBefore and AlgorithmAfter are the canonical algorithms; ""
	// for an entry that did not exist.
	AlgorithmBefore string `json:"algorithm_before"`
	AlgorithmAfter  string `json:"algorithm_after"`
	// Before and After are the entry value as JSON (null when absent).
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
	// AddedFields and RemovedFields name the fields set or dropped, with
	// their values as JSON, in document order.
	AddedFields   []Field `json:"added_fields"`
	RemovedFields []Field `json:"removed_fields"`
	// Reason says what the change keeps and why it is needed.
	Reason string `json:"reason"`
	// Lost lists the behaviour the entry gives up (pulsar target), empty
	// when nothing is lost.
	Lost []string `json:"lost"`
}

// Field is one field of an entry with its value.
type Field struct {
	// Name is the field name (`max_queued`).
	Name string `json:"name"`
	// Value is the field's value as JSON (`4`, `"s"`, `null`).
	Value json.RawMessage `json:"value"`
}

// Availability is the change in what `x-routing-method` can select for one
// config set (lb-config.md E1–E3, M8).
type Availability struct {
	// ConfigSet is the path of the config set's entry: the top-level
	// default (models without a `models` entry) or a `models` entry.
	ConfigSet string `json:"config_set"`
	// Added and Removed are canonical algorithm names that become
	// selectable / stop being selectable (requests for a removed one get
	// HTTP 400 `unavailable`).
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

// Result is the outcome of Migrate for one file.
type Result struct {
	// File is the name used in messages.
	File string
	// Format is the syntax of the input (and the output).
	Format validate.Format
	// Status says whether Output may be written.
	Status Status
	// Input is the file as given; Output is the migrated file when Status
	// is StatusPending, and Input otherwise.
	Input, Output []byte
	// Changes are the rewritten and added entries in document order; empty
	// for StatusRefused (nothing changes until the refusals are resolved)
	// and StatusUnchanged. For StatusInvalid they are the changes that
	// would have produced the invalid file.
	Changes []Change
	// Diff is UnifiedDiff(Options.DiffName, Options.DiffName, Input,
	// Output) when Options.DiffName was given and Status is StatusPending;
	// "" otherwise.
	Diff string
	// Notes are refusals, warnings and infos.
	Notes []Note
	// Availability lists header-availability changes per config set.
	Availability []Availability
	// RequiresAffinityWaitStargate reports that the migration adds
	// cache_affinity_wait_ms to a pulsar-wait-and-widen entry, which
	// Stargate releases older than the pwaw affinity wait (#2288) reject at
	// startup (V18): Output must not reach such a Stargate.
	RequiresAffinityWaitStargate bool
	// Errors are the validation errors that stop the file: decoding
	// problems (StatusUnreadable) or the errors of the rewritten file
	// (StatusInvalid).
	Errors []validate.Diagnostic
	// Before is the validation of the input; After that of Output (nil
	// unless a rewrite was produced). Both come from validate.CheckEntries:
	// their Diagnostics hold the errors (and decoding notes), not the
	// operator warnings lcctl validate reports, and they hold no typed
	// config (Config and every Entry.Config are nil). To bound memory they are
	// trimmed once the checks that read them are done: Before once a
	// rewrite was produced, After on StatusPending and StatusInvalid.
	// Trimmed means Doc, Entries and Config are nil; File, Format,
	// Diagnostics and Counts stay.
	Before, After *validate.Result
}

// Changed reports whether Output differs from Input.
func (r *Result) Changed() bool { return r.Status == StatusPending }

// Refusals returns the error notes.
func (r *Result) Refusals() []Note {
	var out []Note
	for _, n := range r.Notes {
		if n.Severity == SeverityError {
			out = append(out, n)
		}
	}
	return out
}
