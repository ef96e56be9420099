//go:build windows

package safewrite

import (
	"io/fs"
	"os"
	"path/filepath"
)

// renameio, the library Replace uses elsewhere, does not build on Windows;
// there the pending file is a temporary file beside the target that
// os.Rename (MoveFileEx with MOVEFILE_REPLACE_EXISTING) moves over it:
// the target is replaced whole or not at all on one NTFS volume, but
// Windows gives no stronger guarantee (docs/migrate.md). Owners and
// access(2) have no Windows counterpart, and an open target cannot be
// renamed over, so the last-moment edit check after the rename is left
// out there.

// fileOwner reports no owner and no link count on Windows.
func fileOwner(fs.FileInfo) (uid, gid int, links uint64) { return -1, -1, 0 }

// mayWrite leaves the decision to the permission bits (the read-only
// attribute) on Windows.
func mayWrite(string, bool) bool { return true }

// holdTarget holds nothing on Windows: an open file cannot be renamed
// over.
func holdTarget(string) *os.File { return nil }

// tempPending is the Windows pending file.
type tempPending struct {
	f      *os.File
	target string
	done   bool
}

func newPending(target string, mode fs.FileMode) (Pending, error) {
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".lcctl-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(mode); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, err
	}
	return &tempPending{f: f, target: target}, nil
}

func (p *tempPending) Write(b []byte) (int, error)  { return p.f.Write(b) }
func (p *tempPending) Chmod(mode fs.FileMode) error { return p.f.Chmod(mode) }
func (p *tempPending) Chown(int, int) error         { return nil }
func (p *tempPending) Sync() error                  { return p.f.Sync() }

func (p *tempPending) CloseAtomicallyReplace() error {
	if err := p.f.Sync(); err != nil {
		return err
	}
	if err := p.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(p.f.Name(), p.target); err != nil {
		return err
	}
	p.done = true
	return nil
}

func (p *tempPending) Cleanup() error {
	if p.done {
		return nil
	}
	_ = p.f.Close()
	return os.Remove(p.f.Name())
}
