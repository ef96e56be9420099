package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/lcctl/lcctl/internal/testutil"
)

// specVector is one row of gateway.md §3.2.
type specVector struct {
	n                        int
	routingKey, model, affin string
	storeKey                 string
	akOf                     string // the raw ID in ak("...") when the row derives the affinity key
}

var (
	backticked = regexp.MustCompile("`([^`]*)`")
	akCall     = regexp.MustCompile(`ak\("([^"]*)"\)`)
	mtKey      = regexp.MustCompile(`^mt:v1:[^:]*:[0-9a-fA-F]{64}$`)
)

// gatewaySpec reads gateway.md from the shared folder.
func gatewaySpec(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.SharedDir(t), "spec", "gateway.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the text of the markdown section starting with heading.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("gateway.md has no section %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	if j := strings.Index(rest, "\n#"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func parseVectors(t *testing.T) []specVector {
	t.Helper()
	sec := section(t, gatewaySpec(t), "### 3.2 Test vectors")
	var out []specVector
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue // header or separator row
		}
		v := specVector{n: n}
		v.routingKey = firstCode(cells[2])
		v.model = firstCode(cells[3])
		aff := strings.TrimSpace(cells[4])
		if m := akCall.FindStringSubmatch(aff); m != nil {
			v.akOf = m[1]
		}
		switch {
		case strings.HasPrefix(aff, "(empty)"):
		case strings.Contains(aff, "UPPER-case"):
			// The row names the raw ID in prose: sha256("session-1").
			m := regexp.MustCompile(`sha256\("([^"]*)"\)`).FindStringSubmatch(aff)
			if m == nil {
				t.Fatalf("vector %d: cannot find the hashed ID in %q", n, aff)
			}
			sum := sha256.Sum256([]byte(m[1]))
			v.affin = AffinityKeyPrefix + strings.ToUpper(hex.EncodeToString(sum[:]))
		case v.akOf != "" && !mtKey.MatchString(firstCode(aff)) && len(backticked.FindAllString(aff, -1)) == 1:
			// Only ak("x") is given: derive it (other rows check AffinityKey
			// against the spec's explicit values).
			v.affin = hashedAffinityKey(v.akOf)
			v.akOf = ""
		default:
			v.affin = firstCode(aff)
			for _, m := range backticked.FindAllStringSubmatch(aff, -1) {
				if mtKey.MatchString(m[1]) {
					v.affin = m[1]
				}
			}
		}
		v.storeKey = firstCode(cells[5])
		out = append(out, v)
	}
	if len(out) != 9 {
		t.Fatalf("parsed %d test vectors from gateway.md §3.2, want 9", len(out))
	}
	return out
}

// firstCode returns the first `code` span of a table cell, or "" for a cell
// that starts with "(empty)".
func firstCode(cell string) string {
	cell = strings.TrimSpace(cell)
	if strings.HasPrefix(cell, "(empty)") {
		return ""
	}
	if m := backticked.FindStringSubmatch(cell); m != nil {
		return m[1]
	}
	return cell
}

func TestKeySpecVectors(t *testing.T) {
	for _, v := range parseVectors(t) {
		t.Run(strconv.Itoa(v.n), func(t *testing.T) {
			if v.akOf != "" {
				got, err := AffinityKey(SourcePromptCacheKey, v.akOf)
				if err != nil {
					t.Fatal(err)
				}
				if got != v.affin {
					t.Errorf("AffinityKey(prompt_cache_key, %q) = %s, spec says %s", v.akOf, got, v.affin)
				}
			}
			got := Key(v.routingKey, v.model, v.affin)
			if got != v.storeKey {
				t.Errorf("Key(%q, %q, %q) = %s, spec says %s", v.routingKey, v.model, v.affin, got, v.storeKey)
			}
			if err := ValidateKey(got); err != nil {
				t.Errorf("derived key fails ValidateKey: %v", err)
			}
		})
	}
}

func TestKeyWorkedExample(t *testing.T) {
	sec := section(t, gatewaySpec(t), "### 3.1 Worked example")
	codes := backticked.FindAllStringSubmatch(sec, -1)
	var ak, want string
	for _, c := range codes {
		switch {
		case mtKey.MatchString(c[1]):
			ak = c[1]
		case strings.HasPrefix(c[1], KeyPrefix):
			want = c[1]
		}
	}
	if ak == "" || want == "" {
		t.Fatalf("worked example: affinity key %q, store key %q not found", ak, want)
	}
	// The client's request: model "fn-alpha/company/model", prompt_cache_key "session-1".
	rk, model, err := SplitClientModel("fn-alpha/company/model")
	if err != nil {
		t.Fatal(err)
	}
	gotAK, err := AffinityKey(SourcePromptCacheKey, "session-1")
	if err != nil {
		t.Fatal(err)
	}
	if gotAK != ak {
		t.Errorf("affinity key %s, spec %s", gotAK, ak)
	}
	if got := Key(rk, model, gotAK); got != want {
		t.Errorf("store key %s, spec %s", got, want)
	}
	// The hashed input is 123 bytes: 3 length prefixes plus 8+13+78 bytes.
	if n := 24 + len(rk) + len(model) + len(gotAK); n != 123 {
		t.Errorf("hashed input is %d bytes, spec says 123", n)
	}
}

func TestMoreAffinityKeys(t *testing.T) {
	doc := gatewaySpec(t)
	i := strings.Index(doc, "More affinity keys:")
	if i < 0 {
		t.Fatal(`gateway.md has no "More affinity keys:" paragraph`)
	}
	para := doc[i : i+strings.Index(doc[i:], "\n\n")]
	m := regexp.MustCompile("`ak\\(\"([^\"]*)\"\\)`\\s*=\\s*`([^`]*)`").FindAllStringSubmatch(para, -1)
	if len(m) != 2 {
		t.Fatalf("found %d ak() examples, want 2", len(m))
	}
	for _, c := range m {
		for _, src := range Sources {
			got, err := AffinityKey(src, c[1])
			if err != nil {
				t.Fatal(err)
			}
			if got != c[2] {
				t.Errorf("AffinityKey(%s, %q) = %s, spec %s", src, c[1], got, c[2])
			}
		}
	}
}

func TestPartitionSpecExamples(t *testing.T) {
	sec := section(t, gatewaySpec(t), "### 3.3 Where a key lives in Olric (for `lcctl store get --explain`)")
	m := regexp.MustCompile(`vector (\d+) → partition (\d+)`).FindAllStringSubmatch(sec, -1)
	if len(m) != 3 {
		t.Fatalf("found %d partition examples, want 3", len(m))
	}
	vecs := parseVectors(t)
	for _, c := range m {
		n, _ := strconv.Atoi(c[1])
		want, _ := strconv.ParseUint(c[2], 10, 64)
		got := Partition(DMapName, vecs[n-1].storeKey, DefaultPartitionCount)
		if got != want {
			t.Errorf("vector %d: partition %d, spec %d", n, got, want)
		}
	}
}

// TestKeySplitsNeverCollide is the property the length prefix exists for:
// cutting the same byte string into three parts at different places gives
// different keys.
func TestKeySplitsNeverCollide(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes")
		cut := func(label string) (int, int) {
			i := rapid.IntRange(0, len(b)).Draw(t, label+"1")
			j := rapid.IntRange(i, len(b)).Draw(t, label+"2")
			return i, j
		}
		i1, j1 := cut("a")
		i2, j2 := cut("b")
		if i1 == i2 && j1 == j2 {
			return
		}
		k1 := Key(string(b[:i1]), string(b[i1:j1]), string(b[j1:]))
		k2 := Key(string(b[:i2]), string(b[i2:j2]), string(b[j2:]))
		if k1 == k2 {
			t.Fatalf("splits (%d,%d) and (%d,%d) of %x give the same key %s", i1, j1, i2, j2, b, k1)
		}
	})
}

func TestKeyShapeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rk := rapid.String().Draw(t, "rk")
		m := rapid.String().Draw(t, "model")
		ak := rapid.String().Draw(t, "ak")
		k := Key(rk, m, ak)
		if err := ValidateKey(k); err != nil {
			t.Fatal(err)
		}
		if (rk != "" && strings.Contains(k, rk) && len(rk) > 6) || (len(ak) > 6 && strings.Contains(k, ak)) {
			t.Fatalf("key %s contains a raw part", k)
		}
	})
}

func TestAffinityKeyHeaderRules(t *testing.T) {
	sum := sha256.Sum256([]byte("session-1"))
	lower := AffinityKeyPrefix + hex.EncodeToString(sum[:])
	upper := AffinityKeyPrefix + strings.ToUpper(hex.EncodeToString(sum[:]))
	tests := []struct {
		name, in, want, err string
	}{
		{"hashes a plain id after trimming", "  session-1\t", lower, ""},
		{"passes an affinity key through", lower, lower, ""},
		{"passes upper-case hex through unchanged", " " + upper + " ", upper, ""},
		{"third part may be empty", "mt:v1::" + hex.EncodeToString(sum[:]), "mt:v1::" + hex.EncodeToString(sum[:]), ""},
		{"payload keys pass through", "mt:v1:payload:" + hex.EncodeToString(sum[:]), "mt:v1:payload:" + hex.EncodeToString(sum[:]), ""},
		{"63 hex digits is hashed", "mt:v1:session:" + hex.EncodeToString(sum[:])[1:], hashedAffinityKey("mt:v1:session:" + hex.EncodeToString(sum[:])[1:]), ""},
		{"five parts is hashed", "mt:v1:a:b:" + hex.EncodeToString(sum[:]), hashedAffinityKey("mt:v1:a:b:" + hex.EncodeToString(sum[:])), ""},
		{"blank is absent", " \t ", "", "empty after trimming"},
		{"control character", "a\x01b", "", "control characters"},
		{"DEL", "a\x7fb", "", "control characters"},
		{"too long", strings.Repeat("x", 257), "", "at most 256 bytes"},
		{"256 bytes is fine", strings.Repeat("x", 256), hashedAffinityKey(strings.Repeat("x", 256)), ""},
		{"trimmed to 256", " " + strings.Repeat("x", 256) + " ", hashedAffinityKey(strings.Repeat("x", 256)), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AffinityKey(SourceHeader, tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				if strings.TrimSpace(tc.in) != "" && strings.Contains(err.Error(), strings.TrimSpace(tc.in)) {
					t.Fatalf("error %q echoes the session id", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAffinityKeyBodySourcesDoNotTrimOrPassThrough(t *testing.T) {
	sum := sha256.Sum256([]byte("session-1"))
	lower := AffinityKeyPrefix + hex.EncodeToString(sum[:])
	for _, src := range []Source{SourcePromptCacheKey, SourceConversationID} {
		got, err := AffinityKey(src, " session-1")
		if err != nil {
			t.Fatal(err)
		}
		if got == lower || got != hashedAffinityKey(" session-1") {
			t.Errorf("%s: a leading space must be hashed, got %s", src, got)
		}
		got, err = AffinityKey(src, lower)
		if err != nil {
			t.Fatal(err)
		}
		if got == lower {
			t.Errorf("%s: an affinity-key-shaped body value must be hashed, not passed through", src)
		}
		if _, err := AffinityKey(src, ""); err == nil || !strings.Contains(err.Error(), "session id from "+string(src)+" is invalid: must not be empty") {
			t.Errorf("%s: empty id: err = %v", src, err)
		}
	}
	if _, err := AffinityKey("payload", "x"); err == nil || !strings.Contains(err.Error(), "never eligible") {
		t.Errorf("payload source: err = %v", err)
	}
	if _, err := AffinityKey("body", "x"); err == nil || !strings.Contains(err.Error(), "unknown session source") {
		t.Errorf("unknown source: err = %v", err)
	}
}

func TestSplitClientModel(t *testing.T) {
	tests := []struct{ in, rk, model, err string }{
		{"fn-alpha/company/model", "fn-alpha", "company/model", ""},
		{"6F1C2E3D-AAAA-4BBB-8CCC-0123456789AB/m", "6f1c2e3d-aaaa-4bbb-8ccc-0123456789ab", "m", ""},
		{"6F1C2E3DAAAA4BBB8CCC0123456789ABCDEF/m", "6F1C2E3DAAAA4BBB8CCC0123456789ABCDEF", "m", ""},
		{"6F1C2E3D-AAAA-4BBB-8CCC-0123456789AG/m", "6F1C2E3D-AAAA-4BBB-8CCC-0123456789AG", "m", ""},
		{"FN-Alpha/M", "FN-Alpha", "M", ""},
		{"RKsecret", "", "", "has no '/'"},
		{"/Msecret", "", "", "routing key is required"},
		{"RKsecret/", "", "", "model is required"},
	}
	for _, tc := range tests {
		rk, m, err := SplitClientModel(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			// The value (its routing key) is not echoed: "RK/" printed
			// `client model "RK/": ...`.
			if err != nil && strings.Contains(err.Error(), strings.Trim(tc.in, "/")) {
				t.Errorf("%q: err %q quotes the value", tc.in, err)
			}
			continue
		}
		if err != nil || rk != tc.rk || m != tc.model {
			t.Errorf("%q: got (%q, %q, %v), want (%q, %q)", tc.in, rk, m, err, tc.rk, tc.model)
		}
	}
}

func TestValidateKey(t *testing.T) {
	good := Key("a", "b", "c")
	bad := map[string]string{
		"":                                   "must start with",
		"mt:v1:session:abc":                  "must start with",
		"lc:v1:abc":                          "got 9 bytes",
		strings.ToUpper(good[:6]):            "must start with",
		good[:6] + strings.ToUpper(good[6:]): "not a lower-case hex digit",
		good + "0":                           "got 71 bytes",
		good[:69] + "g":                      "byte 70",
		good[:10] + "\x00" + good[11:]:       "byte 11",
	}
	if err := ValidateKey(good); err != nil {
		t.Fatal(err)
	}
	for k, want := range bad {
		if err := ValidateKey(k); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateKey(%q) = %v, want %q", k, err, want)
		}
	}
}

func TestValidateValue(t *testing.T) {
	for _, ok := range []string{"cluster-b", "x", "cluster b", strings.Repeat("~", 256), " padded "} {
		if err := ValidateValue(ok); err != nil {
			t.Errorf("ValidateValue(%q) = %v", ok, err)
		}
	}
	bad := map[string]string{
		"":                         "must not be empty",
		strings.Repeat("a", 257):   "257 bytes",
		strings.Repeat("a", 1<<20): "1048576 bytes",
		"a\tb":                     "0x09 at offset 1",
		"clüster":                  "0xc3 at offset 2",
		"a\x7f":                    "0x7f",
	}
	for v, want := range bad {
		err := ValidateValue(v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateValue(%.20q) = %v, want %q", v, err, want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("error for a %d-byte value is %d bytes long", len(v), len(err.Error()))
		}
	}
}

func TestParseTTL(t *testing.T) {
	good := map[string]string{"10m": "10m0s", "1ms": "1ms", " 90s ": "1m30s", "1500ms": "1.5s", "720h": "720h0m0s", "876000h": "876000h0m0s"}
	for in, want := range good {
		d, err := ParseTTL(in)
		if err != nil || d.String() != want {
			t.Errorf("ParseTTL(%q) = %v, %v; want %s", in, d, err, want)
		}
	}
	bad := map[string]string{
		"":              "invalid ttl",
		"30":            "missing unit",
		"500us":         "under 1ms",
		"0s":            "under 1ms",
		"-5m":           "under 1ms",
		"1.5ms":         "whole number of milliseconds",
		"10 m":          "invalid ttl",
		"1e3ms":         "invalid ttl",
		"999999999999h": "invalid ttl",
		// An Olric member's expiry (now + ttl in int64 ns) overflowed:
		// `put --ttl 2562047h --yes` reported success and stored nothing.
		"876001h":  "over 100 years",
		"2562047h": "over 100 years",
	}
	for in, want := range bad {
		if _, err := ParseTTL(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTTL(%q) err = %v, want %q", in, err, want)
		}
	}
}

func TestParseAddrs(t *testing.T) {
	got, err := ParseAddrs(" 10.0.0.1:3320, [::1]:3321 ,gw-0.gw:3320")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "10.0.0.1:3320|[::1]:3321|gw-0.gw:3320" {
		t.Fatalf("got %q", got)
	}
	bad := map[string]string{
		"":               "no Olric address",
		"  ":             "no Olric address",
		"a:1,,b:2":       "address 2 of 3: empty address",
		"localhost":      "not host:port",
		":3320":          "has no host",
		"h:0":            "not a number in 1-65535",
		"h:65536":        "not a number in 1-65535",
		"h:http":         "not a number",
		"redis://h:3320": "is a URL",
		"h:1,h:1":        "listed twice",
		// Seeds are tried one after the other, each up to the timeouts:
		// 100 unreachable seeds kept lcctl silent for over three minutes.
		strings.Repeat("h:1,", MaxSeeds) + "h:2": "33 addresses: give at most 32 seeds",
		"::1:3320":                               "not host:port",
		"h\x00x:1":                               "offset 1",
	}
	for in, want := range bad {
		if _, err := ParseAddrs(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAddrs(%q) err = %v, want %q", in, err, want)
		}
	}
}

func TestReadSessionLines(t *testing.T) {
	in := strings.Join([]string{
		`{"routing_key":"fn-alpha","model":"company/model","session_id":"session-1","source":"prompt_cache_key"}`,
		``,
		`{"client_model":"fn-alpha/company/model","affinity_key":"mt:v1:session:84097828fc31a8c8d29210df48901a85de7fd013f686b17be77d1be29cb7a98b"}`,
		`not json`,
		`{"model":"m","affinity_key":"k","extra":1}`,
		`{"model":"m","affinity_key":"k"} {}`,
		`{"model":null,"affinity_key":"k"}`,
		`{"model":"m","session_id":"s"}`,
		`{"model":"m","session_id":"s","source":"payload"}`,
		`{"routing_key":"","model":"","affinity_key":""}`,
		"{\"model\":\"m\",\"affinity_key\":\"\xff\"}",
		`{"model":5,"affinity_key":"k"}`,
		`{"routing_key":"r","client_model":"r/m","affinity_key":"k"}`,
		`   `,
		// encoding/json keeps the last of repeated fields: this line
		// used to hash "b" without a word.
		`{"model":"m","affinity_key":"a","affinity_key":"b"}`,
		`[{"model":"m","affinity_key":"k"}]`,
	}, "\n")
	type res struct {
		line int
		key  string
		err  string
	}
	want := []res{
		{1, "lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6", ""},
		{3, "lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6", ""},
		{4, "", "not a JSON object"},
		{5, "", "unknown field"},
		{6, "", "trailing data"},
		{7, "", "not null"},
		{8, "", "source (--source) is missing"},
		{9, "", "never eligible"},
		{10, "lc:v1:9d908ecfb6b256def8b49a7c504e6c889c4b0e41fe6ce3e01863dd7b61a20aa0", ""},
		{11, "", "not valid UTF-8"},
		{12, "", `field "model" must be a string, not a number`},
		{13, "", "do not also give"},
		{15, "", `field "affinity_key" is given twice`},
		{16, "", "want a JSON object of session fields, got an array"},
	}
	var got []res
	err := ReadSessionLines(strings.NewReader(in), func(l BatchLine) error {
		r := res{line: l.Line}
		if l.Err != nil {
			r.err = l.Err.Error()
		} else {
			r.key = l.Session.Key()
		}
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].line != want[i].line || got[i].key != want[i].key || !strings.Contains(got[i].err, want[i].err) || (want[i].err == "") != (got[i].err == "") {
			t.Errorf("result %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestReadSessionLinesLongLineAndCRLF(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"model":"m","affinity_key":"` + strings.Repeat("k", MaxBatchLineBytes) + "\"}\r\n")
	b.WriteString("{\"model\":\"m\",\"affinity_key\":\"k\"}\r\n")
	b.WriteString(`{"model":"m","affinity_key":"k"}`) // no final newline
	var lines []BatchLine
	if err := ReadSessionLines(&b, func(l BatchLine) error { lines = append(lines, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 {
		t.Fatalf("got %d lines", len(lines))
	}
	if lines[0].Err == nil || !strings.Contains(lines[0].Err.Error(), "longer than") {
		t.Errorf("line 1: %v", lines[0].Err)
	}
	for _, l := range lines[1:] {
		if l.Err != nil || l.Session.Key() != Key("", "m", "k") {
			t.Errorf("line %d: %v %s", l.Line, l.Err, l.Session.Key())
		}
	}
	if lines[2].Line != 3 {
		t.Errorf("last line number %d", lines[2].Line)
	}
}
