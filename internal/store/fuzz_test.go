package store

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Fuzz targets for every parser of this package. Run one with e.g.
//
//	go test -run '^$' -fuzz FuzzParseAddrs -fuzztime 30s ./internal/store
//
// Crashers are kept under testdata/fuzz/<target> and replayed by go test.

func FuzzParseAddrs(f *testing.F) {
	for _, s := range []string{"10.0.0.1:3320", " a:1 , [::1]:2", "a:1,,b:2", "redis://h:1", "h:0", "[::1", "h:65536", ":1", "a:1,a:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addrs, err := ParseAddrs(s)
		if err != nil {
			if len(err.Error()) > 500 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if len(addrs) == 0 {
			t.Fatal("no error and no address")
		}
		seen := map[string]bool{}
		for _, a := range addrs {
			if err := validateAddr(a); err != nil || seen[a] || a != strings.TrimSpace(a) {
				t.Fatalf("accepted %q: %v", a, err)
			}
			seen[a] = true
		}
		again, err := ParseAddrs(strings.Join(addrs, ","))
		if err != nil || strings.Join(again, ",") != strings.Join(addrs, ",") {
			t.Fatalf("round trip of %q: %q, %v", addrs, again, err)
		}
	})
}

func FuzzParseTTL(f *testing.F) {
	for _, s := range []string{"10m", "1ms", "500us", "1.5ms", "30", "", "-1h", "9223372036854775807ns", "1h2m3.004s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTTL(s)
		if err != nil {
			return
		}
		if d < time.Millisecond || d > MaxTTL || d%time.Millisecond != 0 {
			t.Fatalf("accepted %q as %v", s, d)
		}
		if ValidateTTL(d) != nil {
			t.Fatalf("ParseTTL and ValidateTTL disagree on %v", d)
		}
	})
}

func FuzzDecodeSessionLine(f *testing.F) {
	for _, s := range []string{
		`{"routing_key":"fn-alpha","model":"company/model","session_id":"session-1","source":"prompt_cache_key"}`,
		`{"client_model":"fn/m","affinity_key":"k"}`,
		`{"model":"m","session_id":" mt:v1:x:` + strings.Repeat("A", 64) + ` ","source":"header"}`,
		`{"model":null}`, `[]`, `{"model":"m","affinity_key":"k"} x`, `{"model":"\u0000","affinity_key":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		in, s, err := DecodeSessionLine(line)
		if err != nil {
			return
		}
		if !utf8.Valid(line) {
			t.Fatal("accepted invalid UTF-8")
		}
		if err := ValidateKey(s.Key()); err != nil {
			t.Fatal(err)
		}
		s2, err := in.Resolve()
		if err != nil || s2 != s {
			t.Fatalf("resolving again: %+v, %v", s2, err)
		}
	})
}

func FuzzReadSessionLines(f *testing.F) {
	f.Add([]byte("{\"model\":\"m\",\"affinity_key\":\"k\"}\n\n{}\r\nnot json"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		last := 0
		err := ReadSessionLines(bytes.NewReader(in), func(l BatchLine) error {
			if l.Line <= last {
				t.Fatalf("line %d after %d", l.Line, last)
			}
			last = l.Line
			if l.Err == nil && ValidateKey(l.Session.Key()) != nil {
				t.Fatal("bad key")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("reading from memory failed: %v", err)
		}
		if n := bytes.Count(in, []byte("\n")) + 1; last > n {
			t.Fatalf("line %d of %d", last, n)
		}
	})
}

func FuzzAffinityKey(f *testing.F) {
	f.Add("prompt_cache_key", "session-1")
	f.Add("header", "  mt:v1:session:"+strings.Repeat("ab", 32)+"\t")
	f.Add("header", " ")
	f.Add("conversation_id", "\x7f")
	f.Fuzz(func(t *testing.T, source, id string) {
		ak, err := AffinityKey(Source(source), id)
		if err != nil {
			if len(id) >= 8 && strings.Contains(err.Error(), id) {
				t.Fatalf("error %q echoes the session id", err)
			}
			return
		}
		if !IsAffinityKey(ak) {
			t.Fatalf("derived %q, which does not look like an affinity key", ak)
		}
		if Source(source) != SourceHeader && !strings.HasPrefix(ak, AffinityKeyPrefix) {
			t.Fatalf("body source gave %q", ak)
		}
		if Source(source) == SourceHeader && ak != strings.TrimSpace(id) && !strings.HasPrefix(ak, AffinityKeyPrefix) {
			t.Fatalf("header %q gave %q", id, ak)
		}
	})
}

func FuzzValidateKeyAndValue(f *testing.F) {
	f.Add(Key("a", "b", "c"))
	f.Add("lc:v1:")
	f.Add("cluster-b")
	f.Add(strings.Repeat("x", 300))
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateKey(s) == nil && (len(s) != KeyLen || !strings.HasPrefix(s, KeyPrefix) || strings.ToLower(s) != s) {
			t.Fatalf("accepted key %q", s)
		}
		if ValidateValue(s) == nil {
			if len(s) == 0 || len(s) > MaxValueBytes {
				t.Fatalf("accepted value of %d bytes", len(s))
			}
			for i := 0; i < len(s); i++ {
				if s[i] < 0x20 || s[i] > 0x7e {
					t.Fatalf("accepted byte %#x", s[i])
				}
			}
		}
		if err := ValidateDMapName(s); err == nil && (s == "" || len(s) > 128 || strings.ContainsAny(s, " \t\n")) {
			t.Fatalf("accepted dmap %q", s)
		}
	})
}

func FuzzSplitClientModel(f *testing.F) {
	f.Add("fn-alpha/company/model")
	f.Add("6F1C2E3D-AAAA-4BBB-8CCC-0123456789AB/m")
	f.Add("/")
	f.Fuzz(func(t *testing.T, s string) {
		rk, m, err := SplitClientModel(s)
		if err != nil {
			return
		}
		if rk == "" || m == "" || strings.Contains(rk, "/") {
			t.Fatalf("split %q into %q, %q", s, rk, m)
		}
		if !strings.EqualFold(rk+"/"+m, s) {
			t.Fatalf("split %q into %q, %q", s, rk, m)
		}
	})
}
