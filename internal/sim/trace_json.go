package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// JSON Lines traces: one object per line.
//
// Mooncake (kvcache-ai/Mooncake FAST25-release/traces): timestamp (ms
// from the start), input_length, output_length (tokens) and hash_ids, the
// prompt as chained 512-token block ids. There are no session ids: a
// request continues the most recent earlier request with which it shares
// the longest leading run of at least 2 blocks (block 0 alone is the
// system prompt nearly every request shares, so 1 block proves nothing);
// without one it starts a session. It is a follow-up when that run
// covers all the parent's full blocks and the parent had no follow-up
// yet, else a branch (a regenerated, edited or forked turn).
//
// Bailian (Alibaba's Qwen usage traces): chat_id, parent_chat_id (-1 for
// the first request of a conversation), turn, timestamp (s from the
// start), input_length, output_length and hash_ids of 16-token blocks.
// A request's session is its root chat's; a parent that did not appear
// earlier in the file is an error.
//
// Both may carry routing_key and model strings; other fields are ignored.

// Reconstruction bounds: the block table of the Mooncake rule forgets
// everything when it passes maxReconBlocks distinct ids (sessions found
// afterwards start afresh), and a Bailian trace may hold at most
// maxChats chat ids.
const (
	maxReconBlocks = 1 << 21
	maxChats       = 1 << 21
)

type jsonState struct {
	ids      []uint64
	blockReq u64Index  // block id → the latest request holding it (index into reqs)
	reqs     []reqInfo // the requests read since the block table was last cleared
	chats    map[int64]chatRef
	n        int64 // requests read
}

type reqInfo struct {
	sess     uint64
	full     int64 // full blocks of the prompt
	followed bool  // a follow-up continued it
}

type chatRef struct {
	sess     uint64
	hasChild bool
}

// idList decodes hash_ids into a reused buffer.
type idList struct {
	ids []uint64
	set bool
}

// idListError is a bad hash_ids value; generic is the message without
// the offending text (for the first line of a file that may be no trace).
type idListError struct{ msg, generic string }

func (e *idListError) Error() string { return e.msg }

// UnmarshalJSON reads a JSON array of integers (0 to 2^63−1).
func (l *idList) UnmarshalJSON(b []byte) error {
	l.set = true
	l.ids = l.ids[:0]
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return &idListError{fmt.Sprintf("want a list of integers, got %s", clip(b)), "want a list of integers"}
	}
	b = b[1 : len(b)-1]
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, ',')
		tok := b
		if i >= 0 {
			tok, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		tok = bytes.TrimSpace(tok)
		var v uint64
		ok := len(tok) > 0 && len(tok) <= 19
		for _, c := range tok {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			v = v*10 + uint64(c-'0')
		}
		if !ok || v > math.MaxInt64 {
			return &idListError{fmt.Sprintf("want a list of integers 0–2^63-1, got element %d: %s", len(l.ids), clip(tok)), fmt.Sprintf("want a list of integers 0–2^63-1 (element %d is not)", len(l.ids))}
		}
		l.ids = append(l.ids, v)
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q…", b[:40])
	}
	return fmt.Sprintf("%q", b)
}

type jsonLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int64   `json:"input_length"`
	OutputLength *int64   `json:"output_length"`
	HashIDs      *idList  `json:"hash_ids"`
	ChatID       *int64   `json:"chat_id"`
	ParentChatID *int64   `json:"parent_chat_id"`
	RoutingKey   *string  `json:"routing_key"`
	Model        *string  `json:"model"`
}

// colOf is the 1-based column of a field's key in line (1 when absent).
func colOf(line []byte, field string) int {
	if i := bytes.Index(line, []byte(`"`+field+`"`)); i >= 0 {
		return i + 1
	}
	return 1
}

// topKeys returns the keys of a JSON object line.
func (t *traceReader) topKeys(line []byte) (map[string]bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, t.jsonErr(line, err)
	}
	keys := map[string]bool{}
	for k := range m {
		keys[k] = true
	}
	return keys, nil
}

func (t *traceReader) jsonErr(line []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var le *idListError
	switch {
	case errors.As(err, &le):
		if !t.parsed {
			return t.errAt(colOf(line, "hash_ids"), "hash_ids", "%s", le.generic)
		}
		return t.errAt(colOf(line, "hash_ids"), "hash_ids", "%s", le.msg)
	case errors.As(err, &se):
		if !t.parsed {
			return t.errAt(int(se.Offset), "", "invalid JSON")
		}
		return t.errAt(int(se.Offset), "", "invalid JSON: %v", se)
	case errors.As(err, &te):
		want := "a number"
		switch te.Type.String() {
		case "int64", "*int64":
			want = "an integer"
		case "string", "*string":
			want = "a string"
		}
		got := ", got " + te.Value
		if !t.parsed {
			got = "" // the first line of a file that may be no trace: not quoted
		}
		if te.Field == "" {
			return t.errAt(1, "", "want a JSON object%s", got)
		}
		return t.errAt(colOf(line, te.Field), te.Field, "want %s%s", want, got)
	}
	return t.errAt(1, "", "invalid JSON: %v", err)
}

// parseJSON reads one Mooncake or Bailian line and links it to its
// session.
func (t *traceReader) parseJSON(line []byte) (TraceRecord, error) {
	var rec TraceRecord
	ids := &idList{ids: t.js.ids[:0]}
	jl := jsonLine{HashIDs: ids}
	if err := json.Unmarshal(line, &jl); err != nil {
		return rec, t.jsonErr(line, err)
	}
	if at, key := dupKey(line); at >= 0 {
		// encoding/json keeps the last of a repeated key without a word;
		// validate calls a duplicate an error (V4), and so does a trace.
		if !t.parsed {
			return rec, t.errAt(at+1, "", "a key appears twice in the object")
		}
		return rec, t.errAt(at+1, key, "duplicate field %q (a key appears once per line)", key)
	}
	t.js.ids = ids.ids
	bailian := t.format == TraceBailian
	if jl.ChatID != nil && !bailian {
		return rec, t.errAt(colOf(line, "chat_id"), "chat_id", "a bailian line in a mooncake trace: a trace has one format (workload.trace_format)")
	}
	need := []struct {
		name string
		ok   bool
	}{{"timestamp", jl.Timestamp != nil}, {"input_length", jl.InputLength != nil}, {"output_length", jl.OutputLength != nil}, {"hash_ids", ids.set}}
	if bailian {
		need = append(need, struct {
			name string
			ok   bool
		}{"chat_id", jl.ChatID != nil}, struct {
			name string
			ok   bool
		}{"parent_chat_id", jl.ParentChatID != nil})
	}
	for _, f := range need {
		if !f.ok {
			return rec, t.errAt(len(line), f.name, "missing field %s (a %s line needs timestamp, input_length, output_length, hash_ids%s)", f.name, t.format, map[bool]string{true: ", chat_id, parent_chat_id"}[bailian])
		}
	}
	ts := *jl.Timestamp
	unit, limit := 1e6, maxTraceTimeMs // Mooncake: ms
	if bailian {
		unit, limit = 1e9, maxTraceTimeMs/1000 // Bailian: s
	}
	if math.IsNaN(ts) || ts < 0 || ts > limit {
		return rec, t.errAt(colOf(line, "timestamp"), "timestamp", "want a time 0–%g (%s from the start), got %v", limit, map[bool]string{false: "ms", true: "s"}[bailian], ts)
	}
	rec.TimeNs = int64(math.Round(ts * unit))
	if rec.TimeNs < t.last {
		return rec, t.errAt(colOf(line, "timestamp"), "timestamp", "time goes backwards (%v after %v)", ts, float64(t.last)/unit)
	}
	for _, x := range []struct {
		name string
		v    int64
		dst  *int64
	}{{"input_length", *jl.InputLength, &rec.InputTokens}, {"output_length", *jl.OutputLength, &rec.OutputTokens}} {
		if x.v < 0 || x.v > maxTraceTokens {
			return rec, t.errAt(colOf(line, x.name), x.name, "want a whole number of tokens 0–2^40, got %d", x.v)
		}
		*x.dst = x.v
	}
	if maxIDs := (rec.InputTokens + t.blockTokens - 1) / t.blockTokens; int64(len(ids.ids)) > maxIDs {
		return rec, t.errAt(colOf(line, "hash_ids"), "hash_ids", "%d block ids stand for more than input_length (%d tokens at %d tokens per block, workload.block_tokens)", len(ids.ids), rec.InputTokens, t.blockTokens)
	}
	if jl.RoutingKey != nil {
		rec.RoutingKey = t.internBytes([]byte(*jl.RoutingKey))
	}
	if jl.Model != nil {
		rec.Model = t.internBytes([]byte(*jl.Model))
	}
	for _, s := range []string{rec.RoutingKey, rec.Model} {
		if !printableASCII(s) {
			return rec, t.errAt(1, "", "routing_key and model must be printable ASCII")
		}
	}
	rec.Blocks = ids.ids
	var err error
	if bailian {
		err = t.linkBailian(line, &rec, *jl.ChatID, *jl.ParentChatID)
	} else {
		t.linkMooncake(&rec)
	}
	if err != nil {
		return rec, err
	}
	t.last = rec.TimeNs
	t.js.n++
	t.stats.Records++
	switch rec.Link {
	case LinkRoot:
		t.stats.Sessions++
	case LinkFollowUp:
		t.stats.FollowUps++
	case LinkBranch:
		t.stats.Branches++
	}
	return rec, nil
}

// linkMooncake applies the reconstruction rule: the parent is the most
// recent request holding the last block of the longest leading run (of
// at least 2) this request shares with any earlier one. Because a block
// id stands for its whole prefix, the requests holding block k−1 are
// exactly those sharing at least k leading blocks.
func (t *traceReader) linkMooncake(rec *TraceRecord) {
	s := &t.js
	// The request table is indexed by int32; it is cleared with the block
	// table, or (a trace of 2^31 requests without blocks) when full.
	if s.blockReq.len() > maxReconBlocks || len(s.reqs) == math.MaxInt32 {
		s.blockReq.clear()
		s.reqs = s.reqs[:0]
	}
	k := 0
	for k < len(rec.Blocks) {
		if _, ok := s.blockReq.get(rec.Blocks[k]); !ok {
			break
		}
		k++
	}
	n := s.n + 1
	rec.Session, rec.Link = uint64(n), LinkRoot
	if k >= 2 {
		pi, _ := s.blockReq.get(rec.Blocks[k-1])
		p := &s.reqs[pi]
		rec.Session, rec.Link = p.sess, LinkBranch
		if !p.followed && int64(k) >= p.full {
			rec.Link = LinkFollowUp
			p.followed = true
		}
	}
	i := int32(len(s.reqs))
	s.reqs = append(s.reqs, reqInfo{sess: rec.Session, full: min(rec.InputTokens/t.blockTokens, int64(len(rec.Blocks)))})
	for _, b := range rec.Blocks {
		s.blockReq.put(b, i)
	}
}

// linkBailian follows parent_chat_id.
func (t *traceReader) linkBailian(line []byte, rec *TraceRecord, chat, parent int64) error {
	s := &t.js
	if s.chats == nil {
		s.chats = map[int64]chatRef{}
	}
	if _, dup := s.chats[chat]; dup {
		return t.errAt(colOf(line, "chat_id"), "chat_id", "chat_id %d appeared before", chat)
	}
	if len(s.chats) >= maxChats {
		return t.errAt(colOf(line, "chat_id"), "chat_id", "more than %d chats: lcctl keeps its chat table bounded; split the trace", maxChats)
	}
	if parent < 0 {
		rec.Session, rec.Link = mix64(uint64(chat)^0x62616c69)&^(1<<63)|1, LinkRoot
	} else {
		p, ok := s.chats[parent]
		if !ok {
			return t.errAt(colOf(line, "parent_chat_id"), "parent_chat_id", "parent %d never appeared before this line (parents come first; -1 starts a conversation)", parent)
		}
		rec.Session, rec.Link = p.sess, LinkFollowUp
		if p.hasChild {
			rec.Link = LinkBranch
		}
		p.hasChild = true
		s.chats[parent] = p
	}
	s.chats[chat] = chatRef{sess: rec.Session}
	return nil
}

// dupKey returns the byte offset in line, a JSON object that
// json.Unmarshal accepted, of the first top-level key that repeats an
// earlier one as encoding/json matches keys to fields (unescaped, case
// folded), and that key; -1 when no key repeats. Nested objects are not
// looked into (the trace formats have none). It allocates only for a key
// with an escape.
func dupKey(line []byte) (int, string) {
	var store [8][]byte
	seen := store[:0]
	depth := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			start, esc := i, false
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					esc = true
					i++
				}
			}
			if depth != 1 {
				continue
			}
			j := i + 1
			for j < len(line) && (line[j] == ' ' || line[j] == '\t' || line[j] == '\r' || line[j] == '\n') {
				j++
			}
			if j >= len(line) || line[j] != ':' {
				continue // a value
			}
			key := line[start+1 : min(i, len(line))]
			if esc {
				var k string
				if json.Unmarshal(line[start:i+1], &k) != nil {
					continue
				}
				key = []byte(k)
			}
			for _, s := range seen {
				if bytes.EqualFold(s, key) {
					return start, string(key)
				}
			}
			seen = append(seen, key)
		}
	}
	return -1, ""
}
