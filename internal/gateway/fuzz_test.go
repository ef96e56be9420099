package gateway

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
}

// FuzzDotenv: ParseDotenv never panics, errors are *SyntaxError with a
// line inside the input, and every parsed variable round-trips through
// Check without panicking.
func FuzzDotenv(f *testing.F) {
	addFiles(f, filepath.Join("testdata", "*.env"))
	f.Add([]byte("A=\"x\\\"y\" # c\nexport B='z'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := ParseDotenv("f.env", data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error type %T: %v", err, err)
			}
			if se.Pos.Line < 0 || se.Pos.Line > strings.Count(string(data), "\n")+1 {
				t.Fatalf("line %d outside the input", se.Pos.Line)
			}
			return
		}
		for name, v := range env.Vars {
			if name == "" || v.Pos.Line < 1 {
				t.Fatalf("bad var %+v", v)
			}
		}
		s, _ := Check(env, "")
		_ = s.Store()
	})
}

// FuzzValues: ParseValues never panics on any YAML, errors are
// *SyntaxError, and the rendered variables load and validate.
func FuzzValues(f *testing.F) {
	addFiles(f, filepath.Join("testdata", "*.yaml"))
	f.Add([]byte("llmApiGateway: {olric: {enabled: 'false'}, config: {lastCluster: {ttl: 1e3}}}"))
	f.Add([]byte("a: &a [*a]\nllmApiGateway: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		env, err := ParseValues(NamedInput{Name: "f.yaml", Data: data})
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error type %T: %v", err, err)
			}
			return
		}
		if env.Get("STARGATE_LAST_CLUSTER_ENABLED").ValuesPath == "" {
			t.Fatal("STARGATE_LAST_CLUSTER_ENABLED must always be rendered")
		}
		_, _ = Check(env, "")
	})
}
