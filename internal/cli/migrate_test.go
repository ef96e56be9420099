package cli

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lcctl/lcctl/internal/migrate/safewrite"
	"github.com/lcctl/lcctl/internal/ui"
)

// failingFS hands out pending files that fail: with ENOSPC after limit
// bytes, or after changing the target on disk first (another writer
// racing lcctl).
type failingFS struct {
	limit  int
	change []byte
}

type failingPending struct {
	safewrite.Pending
	left int
}

func (p *failingPending) Write(b []byte) (int, error) {
	if len(b) > p.left {
		n, _ := p.Pending.Write(b[:p.left])
		return n, &fs.PathError{Op: "write", Path: "tmp", Err: syscall.ENOSPC}
	}
	p.left -= len(b)
	return p.Pending.Write(b)
}

func (f *failingFS) NewPending(target string, mode fs.FileMode) (safewrite.Pending, error) {
	if f.change != nil {
		if err := os.WriteFile(target, f.change, 0o644); err != nil {
			return nil, err
		}
	}
	p, err := safewrite.OS.NewPending(target, mode)
	if err != nil {
		return nil, err
	}
	return &failingPending{Pending: p, left: f.limit}, nil
}

func runMigrateTest(t *testing.T, opts *migrateOptions, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Streams: &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }},
		Global: &GlobalOptions{Output: OutputText}}
	env.Style = ui.NewStyles(&out, false)
	env.ErrStyle = ui.NewStyles(&errb, false)
	opts.args = args
	err = runValidated(context.Background(), env, opts, runMigrate)
	return out.String(), errb.String(), err
}

const noSLO = `{"models": {"m": "pulsar-wait-and-widen"}}` + "\n"

func TestMigrateWriteFailuresKeepTheOriginal(t *testing.T) {
	cases := []struct {
		name string
		fs   *failingFS
		want string
	}{
		{"disk full", &failingFS{limit: 7}, "no space left on device"},
		{"changed on disk", &failingFS{limit: 1 << 20, change: []byte(`{"models": {"m": "pulsar"}}` + "\n")}, "changed on disk"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "lb.json")
			if err := os.WriteFile(path, []byte(noSLO), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := &migrateOptions{Strategy: "bounded", MaxQueued: 4, AffinityWaitMs: 300, Write: true, fs: c.fs}
			_, stderr, err := runMigrateTest(t, opts, path)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitFindings {
				t.Fatalf("err %v, want exit 1", err)
			}
			if !strings.Contains(stderr, "write failed (the original is unchanged)") || !strings.Contains(stderr, c.want) {
				t.Fatalf("stderr:\n%s", stderr)
			}
			want := noSLO
			if c.fs.change != nil {
				want = string(c.fs.change)
			}
			if got, _ := os.ReadFile(path); string(got) != want {
				t.Fatalf("file content %q, want %q", got, want)
			}
			if es, _ := os.ReadDir(dir); len(es) != 1 {
				t.Fatalf("temporary files left: %v", es)
			}
		})
	}
}
