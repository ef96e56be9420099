package safewrite

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"
)

// syncEdit is a file system whose pending files run edit (once) when
// they are synced, as another writer appending to the target while the
// temporary file's fsync runs.
type syncEdit struct{ edit func() }

type syncEditPending struct {
	Pending
	edit func()
}

func (s *syncEdit) NewPending(target string, mode fs.FileMode) (Pending, error) {
	p, err := OS.NewPending(target, mode)
	if err != nil {
		return nil, err
	}
	return &syncEditPending{Pending: p, edit: s.edit}, nil
}

func (p *syncEditPending) Sync() error {
	if p.edit != nil {
		p.edit()
		p.edit = nil
	}
	return p.Pending.Sync()
}

// CloseAtomicallyReplace syncs through the wrapper first, so the edit also
// happens when Replace leaves the fsync to it.
func (p *syncEditPending) CloseAtomicallyReplace() error {
	if err := p.Sync(); err != nil {
		return err
	}
	return p.Pending.CloseAtomicallyReplace()
}

// An edit made while the new content is synced is not lost: the last
// check runs after the fsync, immediately before the rename. It ran
// before the fsync, and 26 of 60 appends made just after the temporary
// file appeared were silently overwritten.
func TestReplaceEditDuringSync(t *testing.T) {
	_, path := setup(t, 0o644)
	o, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	appended := original + "x"
	_, err = Replace(o, []byte(migrated), Options{FS: &syncEdit{edit: func() {
		if err := os.WriteFile(path, []byte(appended), 0o644); err != nil {
			t.Fatal(err)
		}
	}}})
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("err %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); string(got) != appended {
		t.Fatalf("the other writer's content was lost: %q", got)
	}
}

// A rewrite with the same bytes but a new modification time counts as a
// change too (a writer in the middle of its edit).
func TestReplaceRefusesNewModTime(t *testing.T) {
	dir, path := setup(t, 0o644)
	o, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := Replace(o, []byte(migrated), Options{}); !errors.Is(err, ErrChanged) {
		t.Fatalf("err %v, want ErrChanged", err)
	}
	intact(t, dir, path, 0o644)
}
