package cli

// The command toolkit: what every command uses to write results and
// report failures (the JSON writer, exit-code helpers, the progress line).
// gh's cmdutil/iostreams are the model: commands get these through Env
// and never build their own encoders.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/lcctl/lcctl/internal/ui"
)

// SchemaID returns the identification of a JSON document of kind doc,
// "lcctl.<doc>/v1" (docs/cli.md "JSON output"). Every document and every
// JSON line lcctl prints carries it as its first key, "schema". The
// version changes only when a key is renamed or removed or changes
// meaning; new keys keep it.
func SchemaID(doc string) string { return "lcctl." + doc + "/v1" }

// writeJSON writes v, which must encode as a JSON object, as one indented
// document stamped with "schema": SchemaID(doc) (see stampJSON), in
// json.Indent's layout. The encoder's bytes are stamped and indented as
// they are handed over, never copied whole: 200,000 models in check
// metrics are a 300 MB document (docs/performance.md). Nothing is
// written when v does not encode.
func writeJSON(w io.Writer, doc string, v any) error {
	ind := ui.NewJSONIndenter(w, "  ")
	if err := encodeStamped(doc, v, func(parts ...[]byte) error {
		for _, p := range parts {
			if _, err := ind.Write(p); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return ind.Close()
}

// streamJSON writes one indented document like writeJSON, for a
// document too large to hold encoded at once: body hands over the
// compact document in pieces through put (concatenated, they are one
// JSON object, as encoding/json without HTML escaping writes it; the
// first piece holds at least the '{' and the first byte of the first
// member, or a "schema" member naming SchemaID(doc) as its first
// member). The pieces are stamped, escaped (ui.JSONSafe) and indented as
// writeJSON does, so the bytes written are writeJSON's for the same
// document. Errors: body's, a first piece that is not the start of an
// object, the writer's.
func streamJSON(w io.Writer, doc string, body func(put func([]byte) error) error) error {
	ind := ui.NewJSONIndenter(w, "  ")
	first := true
	put := func(p []byte) error {
		p = ui.JSONSafe(p)
		if first {
			first = false
			if len(p) < 2 || p[0] != '{' || p[1] == '}' {
				return fmt.Errorf("encoding the %s JSON document: it does not start with an object member", SchemaID(doc))
			}
			head := `{"schema":"` + SchemaID(doc) + `",`
			if bytes.HasPrefix(p, []byte(`{"schema":`)) {
				// Already stamped (a report with its own schema
				// member, as encodeStamped accepts): it must name
				// this document.
				if !bytes.HasPrefix(p, []byte(head)) {
					return fmt.Errorf("encoding the %s JSON document: it already names another schema", SchemaID(doc))
				}
				_, err := ind.Write(p)
				return err
			}
			if _, err := io.WriteString(ind, head); err != nil {
				return err
			}
			p = p[1:]
		}
		_, err := ind.Write(p)
		return err
	}
	if err := body(put); err != nil {
		return err
	}
	return ind.Close()
}

// writeJSONLine writes v as one JSON line (JSON Lines streams: store key
// --batch, store scan) stamped like writeJSON.
func writeJSONLine(w io.Writer, doc string, v any) error {
	b, err := stampJSON(doc, v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// stampJSON encodes v compactly with the one escaping policy of lcctl's
// JSON output (no HTML escaping: '<', '>' and '&' are written as they
// are; the output is read by programs and people, never embedded in
// HTML; C1 controls and bidi formatting characters as \uXXXX, see
// ui.JSONSafe) and puts "schema": SchemaID(doc) first. A value that already
// starts with a "schema" key (checks.JSONReport) must carry the same
// identification and is written unchanged. Errors: v does not encode, or
// is not a JSON object, or names another schema.
func stampJSON(doc string, v any) ([]byte, error) {
	var out []byte
	err := encodeStamped(doc, v, func(parts ...[]byte) error {
		for _, p := range parts {
			out = append(out, p...)
		}
		return nil
	})
	return out, err
}

// encodeStamped encodes v as stampJSON describes and hands the stamped
// document to emit in parts (concatenated, they are the document), which
// are valid only during the call. It returns stampJSON's errors, or
// emit's.
func encodeStamped(doc string, v any, emit func(parts ...[]byte) error) error {
	id := SchemaID(doc)
	sink := &documentSink{handle: func(doc []byte) error {
		// No raw bidi or C1 control inside a string (ui.JSONSafe).
		b := ui.JSONSafe(bytes.TrimSpace(doc))
		if len(b) < 2 || b[0] != '{' {
			return fmt.Errorf("encoding the %s JSON document: a %T is not a JSON object", id, v)
		}
		const key = `{"schema":`
		if bytes.HasPrefix(b, []byte(key)) {
			// Only the first value is decoded, not the whole document.
			var schema string
			if err := json.NewDecoder(bytes.NewReader(b[len(key):])).Decode(&schema); err != nil || schema != id {
				return fmt.Errorf("encoding the %s JSON document: it already names schema %q", id, schema)
			}
			return emit(b)
		}
		head := make([]byte, 0, len(key)+len(id)+3)
		head = append(head, key...)
		head = append(head, '"')
		head = append(head, id...)
		head = append(head, '"')
		if b[1] != '}' {
			head = append(head, ',')
		}
		return emit(head, b[1:])
	}}
	enc := json.NewEncoder(sink)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		if sink.err != nil {
			return err // already worded (handle) or emit's
		}
		return fmt.Errorf("encoding the %s JSON document: %w", id, err)
	}
	return nil
}

// documentSink is the io.Writer a json.Encoder encodes one value into:
// Encoder.Encode hands over the compact document and its newline in one
// Write (encoding/json, v1 and v2 implementations), which handle
// processes in place. err is what handle returned, so that encodeStamped
// tells its errors (already worded) from the encoder's. A second Write is
// refused: it would be a second document.
type documentSink struct {
	handle func(doc []byte) error
	wrote  bool
	err    error
}

func (s *documentSink) Write(p []byte) (int, error) {
	switch {
	case s.err != nil:
	case s.wrote:
		s.err = errors.New("the JSON encoder wrote a document in more than one piece")
	default:
		s.wrote = true
		s.err = s.handle(p)
	}
	if s.err != nil {
		return 0, s.err
	}
	return len(p), nil
}

// emit hands a command's result value (the one its JSON document is
// made of, doc naming it as for writeJSON) to Env's value receiver, in
// every output mode; a no-op without one.
func (env *Env) emit(doc string, v any) {
	if env.onValue != nil {
		env.onValue(doc, v)
	}
}

// failf reports a failure (exit 1) with a message.
func failf(format string, args ...any) error {
	return &ExitError{Code: ExitFindings, Err: fmt.Errorf(format, args...)}
}

// fail wraps err as a failure (exit 1); an ExitError keeps its code.
func fail(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitFindings, Err: err}
}

// newProgress returns the progress line on stderr (ui.Progress: only on
// a terminal other than TERM=dumb, cut to its width).
func newProgress(env *Env) *ui.Progress { return ui.NewProgress(env.Streams) }
