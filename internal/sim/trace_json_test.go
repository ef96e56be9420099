package sim

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

const mc = `{"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [0, 1, 2]}` + "\n"

// TestJSONTraceErrors: every bad line names file:line:col and the field,
// as an *InputError.
func TestJSONTraceErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{mc + `{"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": [0]}` + "\n", "t.jsonl:2:2: timestamp: want a time"},
		{`{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [0]}` + "\n" + `{"timestamp": 4, "input_length": 1, "output_length": 1, "hash_ids": [0]}`, "t.jsonl:2:2: timestamp: time goes backwards (4 after 5)"},
		{mc + `{"timestamp": 0, "input_length": 100, "output_length": 1, "hash_ids": [1, "a"]}`, `t.jsonl:2:59: hash_ids: want a list of integers 0–2^63-1, got element 1: "\"a\""`},
		{mc + `{"timestamp": 0, "input_length": 100, "output_length": 1, "hash_ids": 7}`, `t.jsonl:2:59: hash_ids: want a list of integers, got "7"`},
		{`{"timestamp": 0, "input_length": 100, "output_length": 1, "hash_ids": [1, "secret"]}`, `t.jsonl:1:59: hash_ids: want a list of integers 0–2^63-1 (element 1 is not); this is the first request line`},
		{`{"timestamp": 0, "input_length": 100, "output_length": 1, "hash_ids": [1.5]}`, "hash_ids: want a list of integers"},
		{`{"timestamp": 0, "input_length": 100, "output_length": 1, "hash_ids": [-1]}`, "hash_ids: want a list of integers"},
		{mc + `{"timestamp": 0, "input_length": "many", "output_length": 1, "hash_ids": [1]}`, "t.jsonl:2:18: input_length: want an integer, got string"},
		{`{"timestamp": 0, "input_length": "many", "output_length": 1, "hash_ids": [1]}`, "t.jsonl:1:18: input_length: want an integer; this is the first request line"},
		{`{"timestamp": 0, "input_length": 10, "hash_ids": [1]}`, "output_length: missing field output_length"},
		{`{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1, 2]}`, "hash_ids: 2 block ids stand for more than input_length (10 tokens at 512 tokens per block"},
		{mc + `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [0]`, "t.jsonl:2:"},
		{mc + "0,a,1,1\n", "t.jsonl:2:1: want a JSON object, one per line, in a mooncake trace"},
		{"0,a,1,1\n" + mc, "t.jsonl:2:1: a JSON line in a csv trace"},
		{mc + `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [0]}`, "t.jsonl:2:2: chat_id: a bailian line in a mooncake trace"},
		{`{"timestamp": 0, "input_length": 10}`, "cannot tell the trace format"},
		{`{"chat_id": 1, "parent_chat_id": 9, "turn": 2, "timestamp": 1, "input_length": 16, "output_length": 1, "hash_ids": [0]}`, "t.jsonl:1:16: parent_chat_id: parent 9 never appeared"},
		{`{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1, "input_length": 16, "output_length": 1, "hash_ids": [0]}` + "\n" + `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 2, "input_length": 16, "output_length": 1, "hash_ids": [0]}`, "t.jsonl:2:2: chat_id: chat_id 1 appeared before"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 16, "output_length": 1, "hash_ids": [0]}`, "parent_chat_id: missing field"},
		// A repeated key was read silently, the last one winning; also
		// spelled with an escape or in another case, as encoding/json
		// matches them. A key-like string value is no key.
		{mc + `{"timestamp": 0, "timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [0]}`, `t.jsonl:2:18: timestamp: duplicate field "timestamp"`},
		{mc + `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [0], "Input_Length": 9}`, `t.jsonl:2:74: Input_Length: duplicate field "Input_Length"`},
		{mc + `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [0], "hash_id\u0073": [1]}`, `t.jsonl:2:74: hash_ids: duplicate field "hash_ids"`},
		{`{"timestamp": 0, "timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [0]}`, `t.jsonl:1:18: a key appears twice in the object; this is the first request line`},
		{`{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1, "input_length": 16, "output_length": 1, "hash_ids": [0], "routing_key": "chat_id"}` + "\n" + `{"chat_id": 2, "chat_id": 3, "parent_chat_id": -1, "timestamp": 2, "input_length": 16, "output_length": 1, "hash_ids": [0]}`, `t.jsonl:2:16: chat_id: duplicate field "chat_id"`},
	}
	for _, c := range cases {
		_, err := ReadTrace("t.jsonl", strings.NewReader(c.in), "", 0, nil)
		var ie *InputError
		if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.in, err, c.want)
		}
	}
	_, err := ReadTrace("t.jsonl", strings.NewReader("[1, 2]\n"), TraceMooncake, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "t.jsonl:1:1: want a JSON object") {
		t.Errorf("got %v", err)
	}
	// A format given that the file does not have.
	_, err = ReadTrace("t.jsonl", strings.NewReader(mc), TraceCSV, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "t.jsonl:1:1: a JSON line in a csv trace") {
		t.Errorf("got %v", err)
	}
}

// endless yields n bytes of 'x' without a newline and counts what was
// read.
type endless struct{ left, read int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), e.left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	e.left -= n
	e.read += n
	return int(n), nil
}

// TestHugeTraceLine: a 2 GB line is refused after one buffer, not read
// (or allocated) whole.
func TestHugeTraceLine(t *testing.T) {
	for _, prefix := range []string{"", mc} {
		src := &endless{left: 2 << 30}
		_, err := ReadTrace("t.jsonl", io.MultiReader(strings.NewReader(prefix), src), "", 0, nil)
		if err == nil || !strings.Contains(err.Error(), "line longer than 1048576 bytes") {
			t.Fatalf("got %v", err)
		}
		if src.read > 2*maxTraceLine {
			t.Fatalf("read %d bytes of the long line", src.read)
		}
	}
}

// TestMooncakeSessions: the reconstruction rule on a small trace.
func TestMooncakeSessions(t *testing.T) {
	in := strings.Join([]string{
		`{"timestamp": 0, "input_length": 1536, "output_length": 1, "hash_ids": [0, 1, 2]}`,       // root A
		`{"timestamp": 1, "input_length": 1536, "output_length": 1, "hash_ids": [0, 5, 6]}`,       // root B: shares block 0 only
		`{"timestamp": 2, "input_length": 2048, "output_length": 1, "hash_ids": [0, 1, 2, 3]}`,    // follow-up of A
		`{"timestamp": 3, "input_length": 2048, "output_length": 1, "hash_ids": [0, 1, 2, 9]}`,    // branch: shares 3 blocks with the follow-up, which has 4
		`{"timestamp": 4, "input_length": 2560, "output_length": 1, "hash_ids": [0, 5, 6, 7, 8]}`, // follow-up of B
		`{"timestamp": 5, "input_length": 2000, "output_length": 1, "hash_ids": [0, 5, 6, 7]}`,    // branch: shares 4 of its parent's 5 full blocks
	}, "\n")
	var recs []TraceRecord
	st, err := ReadTrace("t.jsonl", strings.NewReader(in), "", 0, func(r TraceRecord) error {
		r.Blocks = append([]uint64(nil), r.Blocks...)
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := TraceStats{Format: TraceMooncake, BlockTokens: 512, Records: 6, Sessions: 2, FollowUps: 2, Branches: 2}
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	links := []TraceLink{LinkRoot, LinkRoot, LinkFollowUp, LinkBranch, LinkFollowUp, LinkBranch}
	for i, r := range recs {
		if r.Link != links[i] {
			t.Errorf("record %d: link %d, want %d", i, r.Link, links[i])
		}
	}
	if recs[0].Session == recs[1].Session || recs[2].Session != recs[0].Session || recs[3].Session != recs[0].Session || recs[4].Session != recs[1].Session {
		t.Errorf("sessions %d %d %d %d %d", recs[0].Session, recs[1].Session, recs[2].Session, recs[3].Session, recs[4].Session)
	}
	if recs[0].TimeNs != 0 || recs[4].TimeNs != 4_000_000 || recs[2].InputTokens != 2048 || len(recs[4].Blocks) != 5 {
		t.Errorf("records %+v", recs)
	}
}

// TestBailianSessions: explicit parent links, timestamps in seconds.
func TestBailianSessions(t *testing.T) {
	in := strings.Join([]string{
		`{"chat_id": 10, "parent_chat_id": -1, "turn": 1, "timestamp": 0.5, "input_length": 32, "output_length": 4, "hash_ids": [1, 2], "type": "text"}`,
		`{"chat_id": 11, "parent_chat_id": -1, "turn": 1, "timestamp": 1, "input_length": 16, "output_length": 4, "hash_ids": [1]}`,
		`{"chat_id": 12, "parent_chat_id": 10, "turn": 2, "timestamp": 2, "input_length": 48, "output_length": 4, "hash_ids": [1, 2, 3]}`,
		`{"chat_id": 13, "parent_chat_id": 10, "turn": 2, "timestamp": 3, "input_length": 48, "output_length": 4, "hash_ids": [1, 2, 4], "model": "qwen", "routing_key": "rk"}`,
	}, "\n")
	var recs []TraceRecord
	st, err := ReadTrace("b.jsonl", strings.NewReader(in), "", 0, func(r TraceRecord) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (TraceStats{Format: TraceBailian, BlockTokens: 16, Records: 4, Sessions: 2, FollowUps: 1, Branches: 1}); st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	if recs[0].TimeNs != 500_000_000 || recs[2].Session != recs[0].Session || recs[3].Session != recs[0].Session || recs[1].Session == recs[0].Session || recs[3].Model != "qwen" || recs[3].RoutingKey != "rk" {
		t.Fatalf("%+v", recs)
	}
}

func FuzzReadJSONTrace(f *testing.F) {
	f.Add([]byte(mc + `{"timestamp": 1, "input_length": 1100, "output_length": 5, "hash_ids": [0, 1, 3]}` + "\n"))
	f.Add([]byte(`{"chat_id": 1, "parent_chat_id": -1, "turn": 1, "timestamp": 0, "input_length": 16, "output_length": 1, "hash_ids": [0]}` + "\n" +
		`{"chat_id": 2, "parent_chat_id": 1, "turn": 2, "timestamp": 1.5, "input_length": 32, "output_length": 1, "hash_ids": [0, 4]}`))
	f.Add([]byte(`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": []}` + "\n0,a,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		last := int64(-1)
		for _, format := range []string{"", TraceMooncake, TraceBailian} {
			_, err := ReadTrace("f.jsonl", bytes.NewReader(data), format, 0, func(r TraceRecord) error {
				if r.TimeNs < last || r.InputTokens < 0 || r.OutputTokens < 0 || int64(len(r.Blocks)) > r.InputTokens {
					t.Fatalf("bad record %+v", r)
				}
				last = r.TimeNs
				return nil
			})
			last = -1
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) || ie.Line < 1 {
					t.Fatalf("error without a line: %v", err)
				}
			}
		}
	})
}

// BenchmarkDupKey is the duplicate-key pass over one Mooncake line.
func BenchmarkDupKey(b *testing.B) {
	line := []byte(`{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2353, 2354]}`)
	for b.Loop() {
		if at, _ := dupKey(line); at >= 0 {
			b.Fatal("duplicate")
		}
	}
}
