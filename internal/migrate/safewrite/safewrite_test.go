package safewrite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

const (
	original = "{\"models\":{\"m\":\"pulsar-wait-and-widen\"}}\n"
	migrated = "{\"models\":{\"m\":{\"algorithm\":\"pulsar-wait-and-widen\",\"max_queued\":4,\"cache_affinity_wait_ms\":300}}}\n"
)

func setup(t *testing.T, mode fs.FileMode) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "lb-config.json")
	if err := os.WriteFile(path, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// intact asserts the file holds the original bytes with mode and that the
// directory holds no stray temporary file.
func intact(t *testing.T, dir, path string, mode fs.FileMode, want ...string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != original {
		t.Fatalf("file changed: %q", got)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != mode {
		t.Fatalf("mode %v, want %v", st.Mode().Perm(), mode)
	}
	names := dirNames(t, dir)
	want = append(want, filepath.Base(path))
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("directory holds %v, want %v", names, want)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func TestReplaceKeepsModeAndBacksUp(t *testing.T) {
	dir, path := setup(t, 0o640)
	o, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	backup, err := Replace(o, []byte(migrated), Options{Backup: true})
	if err != nil {
		t.Fatal(err)
	}
	if backup != path+".bak" {
		t.Fatalf("backup %q", backup)
	}
	got, _ := os.ReadFile(path)
	if string(got) != migrated {
		t.Fatalf("content %q", got)
	}
	bak, _ := os.ReadFile(backup)
	if string(bak) != original {
		t.Fatalf("backup content %q", bak)
	}
	for _, p := range []string{path, backup} {
		st, _ := os.Stat(p)
		if st.Mode().Perm() != 0o640 {
			t.Errorf("%s mode %v, want 0640", p, st.Mode().Perm())
		}
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Fatalf("directory holds %v", names)
	}
}

func TestReplaceFollowsSymlinks(t *testing.T) {
	dir, path := setup(t, 0o644)
	link := filepath.Join(dir, "current.json")
	if err := os.Symlink(filepath.Base(path), link); err != nil {
		t.Fatal(err)
	}
	o, err := Read(link, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Replace(o, []byte(migrated), Options{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", st.Mode(), err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != migrated {
		t.Fatalf("target content %q", got)
	}
}

func TestReplaceRefusesReadOnlyFile(t *testing.T) {
	dir, path := setup(t, 0o444)
	o, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Replace(o, []byte(migrated), Options{Backup: true})
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("err %v, want ErrReadOnly", err)
	}
	intact(t, dir, path, 0o444)
}

func TestReplaceRefusesUnwritableDirectory(t *testing.T) {
	dir, path := setup(t, 0o644)
	o, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	_, err = Replace(o, []byte(migrated), Options{Backup: true})
	if !errors.Is(err, ErrDirReadOnly) {
		t.Fatalf("err %v, want ErrDirReadOnly", err)
	}
	intact(t, dir, path, 0o644)
}

// fullDisk is an FS whose pending files fail with ENOSPC after limit
// bytes, like a file system that fills up during the write.
type fullDisk struct {
	limit int
	made  []string
}

type fullPending struct {
	Pending
	left int
}

func (p *fullPending) Write(b []byte) (int, error) {
	if len(b) > p.left {
		n, _ := p.Pending.Write(b[:p.left])
		p.left = 0
		return n, &fs.PathError{Op: "write", Path: "pending", Err: syscall.ENOSPC}
	}
	p.left -= len(b)
	return p.Pending.Write(b)
}

func (d *fullDisk) NewPending(target string, mode fs.FileMode) (Pending, error) {
	p, err := OS.NewPending(target, mode)
	if err != nil {
		return nil, err
	}
	d.made = append(d.made, target)
	return &fullPending{Pending: p, left: d.limit}, nil
}

func TestReplaceDiskFull(t *testing.T) {
	for _, limit := range []int{0, 10, len(migrated) - 1} {
		dir, path := setup(t, 0o644)
		o, err := Read(path, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		d := &fullDisk{limit: limit}
		_, err = Replace(o, []byte(migrated), Options{FS: d})
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("limit %d: err %v, want ENOSPC", limit, err)
		}
		if len(d.made) != 1 {
			t.Fatalf("pending files made: %v", d.made)
		}
		intact(t, dir, path, 0o644)
	}
}

// A full disk while writing the backup leaves both the original and the
// directory as they were.
func TestReplaceDiskFullDuringBackup(t *testing.T) {
	dir, path := setup(t, 0o644)
	o, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Replace(o, []byte(migrated), Options{Backup: true, FS: &fullDisk{limit: 5}})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v, want ENOSPC", err)
	}
	intact(t, dir, path, 0o644)
}

func TestReplaceRefusesChangedFile(t *testing.T) {
	// Changed between Read and Replace.
	dir, path := setup(t, 0o644)
	o, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	edited := original + " "
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Replace(o, []byte(migrated), Options{Backup: true}); !errors.Is(err, ErrChanged) {
		t.Fatalf("err %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); string(got) != edited {
		t.Fatalf("the other writer's content was lost: %q", got)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Fatalf("directory holds %v", names)
	}

	// Changed after the new content was written, just before the rename;
	// same size, so only the content comparison can tell.
	dir, path = setup(t, 0o644)
	o, err = Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	sameSize := []byte(original)
	sameSize[2] = 'M'
	_, err = Replace(o, []byte(migrated), Options{BeforeRename: func() {
		if err := os.WriteFile(path, sameSize, 0o644); err != nil {
			t.Fatal(err)
		}
	}})
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("err %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(sameSize) {
		t.Fatalf("the other writer's content was lost: %q", got)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Fatalf("a temporary file was left behind: %v", names)
	}

	// A mode change counts too.
	dir, path = setup(t, 0o644)
	o, _ = Read(path, 1<<20)
	_ = os.Chmod(path, 0o600)
	if _, err := Replace(o, []byte(migrated), Options{}); !errors.Is(err, ErrChanged) {
		t.Fatalf("err %v, want ErrChanged", err)
	}
	intact(t, dir, path, 0o600)
}

func TestReplaceRefusesHardLinkAndExistingBackup(t *testing.T) {
	dir, path := setup(t, 0o644)
	if err := os.Link(path, filepath.Join(dir, "other-name.json")); err != nil {
		t.Fatal(err)
	}
	o, _ := Read(path, 1<<20)
	if _, err := Replace(o, []byte(migrated), Options{}); !errors.Is(err, ErrHardLinked) {
		t.Fatalf("err %v, want ErrHardLinked", err)
	}
	intact(t, dir, path, 0o644, "other-name.json")

	dir, path = setup(t, 0o644)
	if err := os.WriteFile(path+".bak", []byte("an older backup"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, _ = Read(path, 1<<20)
	if _, err := Replace(o, []byte(migrated), Options{Backup: true}); !errors.Is(err, ErrBackupExists) {
		t.Fatalf("err %v, want ErrBackupExists", err)
	}
	intact(t, dir, path, 0o644, "lb-config.json.bak")
	if got, _ := os.ReadFile(path + ".bak"); string(got) != "an older backup" {
		t.Fatalf("the older backup was overwritten: %q", got)
	}
}

// TestBackupLinkedToEndlessFile: an existing FILE.bak that is a link to
// /dev/zero was read whole (os.ReadFile) to compare it with the original,
// until memory ran out. Only as many bytes as the original has (and one
// more) are compared now; the backup is refused as different.
func TestBackupLinkedToEndlessFile(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}
	dir, path := setup(t, 0o644)
	if err := os.Symlink("/dev/zero", path+".bak"); err != nil {
		t.Fatal(err)
	}
	o, _ := Read(path, 1<<20)
	if _, err := Replace(o, []byte(migrated), Options{Backup: true}); !errors.Is(err, ErrBackupExists) {
		t.Fatalf("err %v, want ErrBackupExists", err)
	}
	intact(t, dir, path, 0o644, "lb-config.json.bak")
}

func TestReadRefuses(t *testing.T) {
	dir, path := setup(t, 0o644)
	if _, err := Read(dir, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	if _, err := Read(path, 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing.json"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
