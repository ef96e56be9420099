//go:build !windows

package safewrite

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/renameio/v2"
)

// fileOwner returns the owner and hard-link count of a file stat'ed on a
// Unix system (-1, -1, 0 when the stat carries none).
func fileOwner(st fs.FileInfo) (uid, gid int, links uint64) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid), int(sys.Gid), uint64(sys.Nlink)
	}
	return -1, -1, 0
}

// mayWrite reports whether access(2) lets this process write path (and,
// for a directory, enter it).
func mayWrite(path string, dir bool) bool {
	mode := uint32(2) // W_OK
	if dir {
		mode |= 1 // X_OK
	}
	return syscall.Access(path, mode) == nil
}

// newPending is renameio's pending file in the target's directory: a
// rename(2) over the target, atomic on POSIX file systems.
func newPending(target string, mode fs.FileMode) (Pending, error) {
	return renameio.NewPendingFile(target, renameio.WithTempDir(filepath.Dir(target)), renameio.WithStaticPermissions(mode))
}

// holdTarget opens the target to keep the file being replaced, so an edit
// landing between the last check and the rename is still seen after it
// (Replace, lostEdit); nil when it cannot be opened.
func holdTarget(path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	return f
}
