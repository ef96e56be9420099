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

// renameEdit appends to the target once, in the gap after the last check
// and before the rename (inside CloseAtomicallyReplace).
type renameEdit struct{ path string }

type renameEditPending struct {
	Pending
	path string
}

func (r *renameEdit) NewPending(target string, mode fs.FileMode) (Pending, error) {
	p, err := OS.NewPending(target, mode)
	if err != nil {
		return nil, err
	}
	path := r.path
	r.path = "" // only the first pending file (the target's) edits
	return &renameEditPending{Pending: p, path: path}, nil
}

func (p *renameEditPending) CloseAtomicallyReplace() error {
	if p.path != "" {
		f, err := os.OpenFile(p.path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, _ = f.WriteString("y")
		_ = f.Close()
		p.path = ""
	}
	return p.Pending.CloseAtomicallyReplace()
}

// An in-place edit that lands between the last check and the rename is
// not reported as a success, and its content is saved beside the target.
// Before, Replace returned nil and the appended byte was gone.
func TestReplaceEditDuringRename(t *testing.T) {
	_, path := setup(t, 0o644)
	o, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Replace(o, []byte(migrated), Options{FS: &renameEdit{path: path}})
	if !errors.Is(err, ErrEditedDuringReplace) {
		t.Fatalf("Replace = %v, want ErrEditedDuringReplace", err)
	}
	if got, _ := os.ReadFile(path); string(got) != migrated {
		t.Errorf("target = %q, want the migrated content", got)
	}
	saved, rerr := os.ReadFile(path + ".lcctl-concurrent")
	if rerr != nil || string(saved) != original+"y" {
		t.Errorf("saved version = %q, %v; want %q", saved, rerr, original+"y")
	}
}
