package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Session is the triple the gateway hashes into a store key: the
// X-Routing-Key value, the routed model (X-Model) and the cache affinity
// key (X-Cache-Affinity-Key), all as raw bytes (gateway.md §3).
type Session struct {
	// RoutingKey is the X-Routing-Key value; it may be empty.
	RoutingKey string `json:"routing_key"`
	// Model is the routed model (X-Model), e.g. "company/model".
	Model string `json:"model"`
	// AffinityKey is the X-Cache-Affinity-Key value.
	AffinityKey string `json:"affinity_key"`
}

// Key returns the session's store key (see Key).
func (s Session) Key() string { return Key(s.RoutingKey, s.Model, s.AffinityKey) }

// SessionInput is how an operator names a session, from flags or from one
// JSON line of `lcctl store key` batch input. A nil field is absent; a
// non-nil empty string is present and empty (an empty routing key, model or
// affinity key is a valid part of a key).
//
// The model comes from Model, or from ClientModel ("<routing key>/<model>",
// split as the gateway does, see SplitClientModel), never both. The affinity
// key comes from AffinityKey (used verbatim), or from SessionID plus Source
// (derived with AffinityKey), never both.
type SessionInput struct {
	// RoutingKey is the X-Routing-Key value, used verbatim (nil: empty).
	RoutingKey *string `json:"routing_key"`
	// Model is the routed model (X-Model).
	Model *string `json:"model"`
	// ClientModel is the client's model field, "<routing key>/<model>".
	ClientModel *string `json:"client_model"`
	// AffinityKey is the cache affinity key, used verbatim.
	AffinityKey *string `json:"affinity_key"`
	// SessionID is the raw session ID, turned into the affinity key as
	// the gateway does for Source.
	SessionID *string `json:"session_id"`
	// Source is "prompt_cache_key", "conversation_id" or "header".
	Source *string `json:"source"`
}

// Resolve turns the input into a Session. It returns an error naming the
// JSON field (and the matching flag) when a required part is missing or
// two alternatives are both given, and the gateway's own reason when a
// session ID or client model would be rejected by the gateway. Errors never
// contain a session ID or affinity key.
func (in SessionInput) Resolve() (Session, error) {
	var s Session
	switch {
	case in.ClientModel != nil && (in.Model != nil || in.RoutingKey != nil):
		return s, errors.New("client_model (--client-model) already carries the routing key and model: do not also give routing_key or model")
	case in.ClientModel != nil:
		rk, m, err := SplitClientModel(*in.ClientModel)
		if err != nil {
			return s, err
		}
		s.RoutingKey, s.Model = rk, m
	case in.Model == nil:
		return s, errors.New("model (--model) is missing: give the routed model (X-Model), or client_model (--client-model) as <routing-key>/<model>")
	default:
		s.Model = *in.Model
		if in.RoutingKey != nil {
			s.RoutingKey = *in.RoutingKey
		}
	}
	switch {
	case in.AffinityKey != nil && (in.SessionID != nil || in.Source != nil):
		return s, errors.New("give either affinity_key (--affinity-key) or session_id with source (--session-id, --source), not both")
	case in.AffinityKey != nil:
		s.AffinityKey = *in.AffinityKey
	case in.SessionID == nil:
		return s, errors.New("affinity key is missing: give affinity_key (--affinity-key), or session_id (--session-id) with source (--source)")
	case in.Source == nil:
		return s, errors.New("source (--source) is missing: say where the session id came from: prompt_cache_key, conversation_id or header")
	default:
		src, err := ParseSource(*in.Source)
		if err != nil {
			return s, err
		}
		ak, err := AffinityKey(src, *in.SessionID)
		if err != nil {
			return s, err
		}
		s.AffinityKey = ak
	}
	return s, nil
}

// MaxBatchLineBytes bounds one line of batch input (1 MiB). Session IDs are
// at most 256 bytes, so a longer line cannot describe a valid session.
const MaxBatchLineBytes = 1 << 20

// BatchLine is one line of `lcctl store key` batch input after decoding.
type BatchLine struct {
	// Line is the 1-based line number in the input.
	Line int
	// Input is the decoded line; zero when Err is set.
	Input SessionInput
	// Session is Input resolved; zero when Err is set.
	Session Session
	// Err says what is wrong with this line, or is nil.
	Err error
}

// DecodeSessionLine decodes one JSON object into a SessionInput and resolves
// it. Invalid UTF-8, anything but an object, unknown or repeated fields,
// trailing data after the object, non-string values and JSON null are
// errors that name the field; so are inputs Resolve refuses.
func DecodeSessionLine(line []byte) (SessionInput, Session, error) {
	var in SessionInput
	if !utf8.Valid(line) {
		// encoding/json would silently turn invalid bytes into U+FFFD and so
		// hash different bytes than the gateway saw.
		return SessionInput{}, Session{}, errors.New("line is not valid UTF-8")
	}
	if err := checkSessionObject(line); err != nil {
		return SessionInput{}, Session{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return SessionInput{}, Session{}, fmt.Errorf("not a JSON object of session fields: %w", err)
	}
	if rest := bytes.TrimSpace(line[dec.InputOffset():]); len(rest) > 0 {
		return SessionInput{}, Session{}, errors.New("trailing data after the JSON object")
	}
	s, err := in.Resolve()
	if err != nil {
		return SessionInput{}, Session{}, err
	}
	return in, s, nil
}

// sessionFields are SessionInput's JSON field names.
var sessionFields = map[string]bool{"routing_key": true, "model": true, "client_model": true,
	"affinity_key": true, "session_id": true, "source": true}

// checkSessionObject walks the top-level JSON value of line: it must be an
// object of known fields, each given once, with string values. A JSON null
// would decode to a nil pointer, indistinguishable from an absent field
// ("routing_key": null must never silently mean ""); encoding/json keeps
// the last of repeated fields, so {"affinity_key":"a",…,"affinity_key":"b"}
// would silently hash "b".
func checkSessionObject(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a JSON object of session fields: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("want a JSON object of session fields, got %s", jsonKind(tok))
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not a JSON object of session fields: %v", err)
		}
		name, _ := tok.(string)
		switch {
		case !sessionFields[name]:
			return fmt.Errorf("unknown field %q (want routing_key, model or client_model, and affinity_key or session_id with source)", name)
		case seen[name]:
			return fmt.Errorf("field %q is given twice", name)
		}
		seen[name] = true
		if tok, err = dec.Token(); err != nil {
			return fmt.Errorf("not a JSON object of session fields: %v", err)
		}
		if _, ok := tok.(string); !ok {
			return fmt.Errorf("field %q must be a string, not %s", name, jsonKind(tok))
		}
	}
	return nil
}

// jsonKind names the JSON value a token starts.
func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "an object"
	}
	return "something else"
}

// ReadSessionLines reads JSON lines from r, one SessionInput object per
// line, and calls fn for every non-blank line in order with the decoded and
// resolved session or the line's error. Blank lines (only spaces, tabs or a
// CR) are skipped but counted. A line longer than MaxBatchLineBytes is
// reported as an error for that line and skipped. ReadSessionLines stops
// and returns fn's error if fn returns one, or a read error from r.
func ReadSessionLines(r io.Reader, fn func(BatchLine) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br)
		if err != nil && err != io.EOF {
			return fmt.Errorf("line %d: read: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			bl := BatchLine{Line: n}
			if tooLong {
				bl.Err = fmt.Errorf("line is longer than %d bytes", MaxBatchLineBytes)
			} else {
				bl.Input, bl.Session, bl.Err = DecodeSessionLine(line)
			}
			if ferr := fn(bl); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine returns the next line without its line ending. When the line is
// longer than MaxBatchLineBytes it discards the rest and sets tooLong. The
// error is io.EOF after the last line.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF && (len(buf) > 0 || tooLong) {
				return buf, tooLong, io.EOF
			}
			return buf, tooLong, err
		}
		if !tooLong {
			if len(buf)+len(chunk) > MaxBatchLineBytes {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if !isPrefix {
			// Peek for EOF so the caller sees the last line and EOF together.
			if _, perr := br.Peek(1); perr == io.EOF {
				return buf, tooLong, io.EOF
			}
			return buf, tooLong, nil
		}
	}
}
