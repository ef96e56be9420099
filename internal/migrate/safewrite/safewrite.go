// Package safewrite replaces a file's content atomically, never leaving a
// partial file and never losing the original: the new bytes go to a
// temporary file beside the target (github.com/google/renameio/v2), which
// is synced and renamed over the target only after every check passed.
// The target must still hold exactly the bytes that were read (a file
// changed on disk in between is refused), keeps its permission bits and
// owner, and is refused when read-only, hard-linked or in a directory
// without write permission. A .bak copy of the original can be written
// first.
//
// The file system is injectable (FS) so tests can simulate a full disk.
package safewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lcctl/lcctl/internal/readlimit"
)

// Errors returned (wrapped) by Read and Replace; test them with errors.Is.
var (
	// ErrChanged: the file on disk no longer holds the bytes that were
	// read, or its permission bits changed.
	ErrChanged = errors.New("the file changed on disk since it was read")
	// ErrEditedDuringReplace: the new content is in place, but another
	// process edited the replaced file between the last check and the
	// rename; that version is saved as PATH.lcctl-concurrent.
	ErrEditedDuringReplace = errors.New("the file was edited by another process while it was replaced")
	// ErrReadOnly: the file has no write permission bits, or the process
	// may not write it.
	ErrReadOnly = errors.New("the file is read-only")
	// ErrDirReadOnly: the directory has no write permission, so no
	// temporary file can be created beside the target.
	ErrDirReadOnly = errors.New("the directory is not writable")
	// ErrNotRegular: the path is not a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrHardLinked: the file has more than one hard link; an atomic
	// rename would detach this name from the others.
	ErrHardLinked = errors.New("the file has several hard links")
	// ErrBackupExists: the backup path exists with other content.
	ErrBackupExists = errors.New("the backup file already exists with other content")
	// ErrTooLarge: the file is larger than the read limit.
	ErrTooLarge = errors.New("the file is larger than the input limit")
)

// Original is a file as read for an in-place rewrite.
type Original struct {
	// Path is the path as given; Target is the file it names after
	// resolving symbolic links (the file that is rewritten, so links stay).
	Path, Target string
	// Data is the content read.
	Data []byte
	// Mode is the permission bits (and setuid/setgid/sticky).
	Mode fs.FileMode
	// ModTime is the modification time when it was read: a rewrite with
	// the same bytes (an editor in the middle of saving) still counts as
	// a change.
	ModTime time.Time
	// UID and GID own the file (-1 when unknown).
	UID, GID int
	// Links is the hard-link count (0 when unknown).
	Links uint64
}

// Read reads path for a later Replace, refusing anything but a regular
// file of at most limit bytes. Errors name the path.
func Read(path string, limit int64) (*Original, error) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", path, readlimit.Cause(err))
	}
	// A named pipe is refused before it is opened: opening one that no
	// process writes to blocks forever.
	if st, err := os.Stat(target); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil, fmt.Errorf("failed to read %s: %w", path, ErrNotRegular)
	}
	f, err := os.Open(target)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", path, readlimit.Cause(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", path, readlimit.Cause(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("failed to read %s: %w", path, ErrNotRegular)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("failed to read %s: %d bytes: %w (%d bytes)", path, st.Size(), ErrTooLarge, limit)
	}
	data, err := readlimit.ReadAll(f, limit)
	if _, ok := errors.AsType[*readlimit.TooLargeError](err); ok {
		return nil, fmt.Errorf("failed to read %s: %w (%d bytes)", path, ErrTooLarge, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", path, readlimit.Cause(err))
	}
	o := &Original{Path: path, Target: target, Data: data, Mode: st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), ModTime: st.ModTime(), UID: -1, GID: -1}
	o.UID, o.GID, o.Links = fileOwner(st)
	return o, nil
}

// Pending is a temporary file that will atomically replace its target.
// renameio's *PendingFile implements it.
type Pending interface {
	io.Writer
	// Chmod and Chown set the temporary file's mode and owner.
	Chmod(mode fs.FileMode) error
	Chown(uid, gid int) error
	// Sync flushes the temporary file's content to stable storage
	// (fsync).
	Sync() error
	// CloseAtomicallyReplace syncs, closes and renames the temporary file
	// over the target.
	CloseAtomicallyReplace() error
	// Cleanup closes and removes the temporary file unless it replaced
	// the target.
	Cleanup() error
}

// FS creates pending files. The default writes a temporary file in the
// target's directory with renameio.
type FS interface {
	NewPending(target string, mode fs.FileMode) (Pending, error)
}

type osFS struct{}

func (osFS) NewPending(target string, mode fs.FileMode) (Pending, error) {
	return newPending(target, mode)
}

// OS is the real file system.
var OS FS = osFS{}

// Options control Replace.
type Options struct {
	// Backup writes the original content to Path + ".bak" (atomically,
	// same mode) before the target is replaced. An existing backup with
	// the same content is kept; one with other content is refused.
	Backup bool
	// FS creates the pending files; nil means OS.
	FS FS
	// BeforeRename, when set, runs after the new content is written and
	// synced and before the last check and the rename (tests use it to
	// change the file at the worst moment).
	BeforeRename func()
}

// Replace writes data over the file o was read from. It returns the
// backup path when a backup was written or an identical one kept ("" for
// none, also when writing the backup failed); a backup made before a later
// failure stays, holding the original content. On any error the target
// keeps its content, mode and owner, and no temporary file is left behind.
//
// The last check and the window that remains: the new content is written
// to a temporary file and fsynced (milliseconds on a busy disk), and only
// then is the target re-read and compared with what was read (size,
// modification time, mode and every byte), immediately before close(2)
// and rename(2). An edit made before that check, also one made while the
// fsync runs, is detected (ErrChanged) and the other writer's content is
// kept. What remains is the gap between the check and the rename (a close
// and a rename, microseconds): POSIX has no "rename only if the target is
// unchanged", so an edit landing exactly there is overwritten. The check
// used to run before the fsync, and an append made just after the
// temporary file appeared was lost in 26 of 60 runs. An in-place edit that
// lands in that gap is still found after the rename (the replaced file is
// held open): Replace then returns ErrEditedDuringReplace and saves that version as
// PATH.lcctl-concurrent (4 of 50 runs of an append every ~2 ms exited 0
// with the byte gone before this).
func Replace(o *Original, data []byte, opt Options) (backup string, err error) {
	fsys := opt.FS
	if fsys == nil {
		fsys = OS
	}
	if err := o.writable(); err != nil {
		return "", err
	}
	if err := o.unchanged(); err != nil {
		return "", err
	}
	if opt.Backup {
		backup = o.Path + ".bak"
		if err := o.writeBackup(fsys, backup); err != nil {
			return "", err
		}
	}
	// The target is held open from the last check to after the rename: an
	// edit that lands in the gap goes to the replaced file, and the held
	// descriptor still sees it.
	var held *os.File
	defer func() {
		if held != nil {
			_ = held.Close()
		}
	}()
	if err := o.write(fsys, o.Target, data, func() error {
		if opt.BeforeRename != nil {
			opt.BeforeRename()
		}
		if err := o.unchanged(); err != nil {
			return err
		}
		held = holdTarget(o.Target)
		return nil
	}); err != nil {
		return backup, err
	}
	return backup, o.lostEdit(fsys, held)
}

// lostEdit checks, after the rename, whether the file that was replaced
// changed after the last check (an edit that landed between the check and
// the rename). If it did, that version is saved beside the target as
// PATH.lcctl-concurrent and the error (ErrEditedDuringReplace) says so: the
// migration is in place, the other writer's content is not lost, and the
// run is not reported as a success. An editor that saved by renaming its
// own file over the target in that gap cannot be seen (docs/migrate.md).
func (o *Original) lostEdit(fsys FS, held *os.File) error {
	if held == nil {
		return nil
	}
	st, err := held.Stat()
	if err != nil || (st.Size() == int64(len(o.Data)) && st.ModTime().Equal(o.ModTime)) {
		return nil
	}
	saved := o.Path + ".lcctl-concurrent"
	theirs, rerr := io.ReadAll(io.NewSectionReader(held, 0, st.Size()))
	if rerr == nil {
		rerr = o.write(fsys, saved, theirs, nil)
	}
	if rerr != nil {
		return fmt.Errorf("%s: %w, and its version could not be saved: %v; the new content is in place", o.Path, ErrEditedDuringReplace, rerr)
	}
	return fmt.Errorf("%s: %w; the new content is in place and the other version is saved in %s", o.Path, ErrEditedDuringReplace, saved)
}

// writable refuses read-only files, hard-linked files and directories that
// cannot take a temporary file. Permission bits are checked as well as
// access(2), so the refusal also holds for root, who may write anything.
func (o *Original) writable() error {
	st, err := os.Stat(o.Target)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", o.Path, readlimit.Cause(err))
	}
	if st.Mode()&0o222 == 0 || !mayWrite(o.Target, false) {
		return fmt.Errorf("cannot write %s: %w (mode %v); make it writable if it should be migrated", o.Path, ErrReadOnly, st.Mode().Perm())
	}
	if o.Links > 1 {
		return fmt.Errorf("cannot write %s: %w (%d); lcctl replaces files by renaming a new file over them, which would leave the other names with the old content", o.Path, ErrHardLinked, o.Links)
	}
	dir := filepath.Dir(o.Target)
	dst, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", o.Path, readlimit.Cause(err))
	}
	if dst.Mode()&0o222 == 0 || !mayWrite(dir, true) {
		return fmt.Errorf("cannot write %s: %w (%s, mode %v): lcctl writes a temporary file beside the target and renames it", o.Path, ErrDirReadOnly, dir, dst.Mode().Perm())
	}
	return nil
}

// unchanged re-reads the target and compares its mode, size,
// modification time and content with what was read.
func (o *Original) unchanged() error {
	f, err := os.Open(o.Target)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w: %v", o.Path, ErrChanged, readlimit.Cause(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cannot write %s: %w: %v", o.Path, ErrChanged, readlimit.Cause(err))
	}
	if st.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != o.Mode {
		return fmt.Errorf("cannot write %s: %w (its mode changed)", o.Path, ErrChanged)
	}
	if st.Size() != int64(len(o.Data)) || !st.ModTime().Equal(o.ModTime) {
		return fmt.Errorf("cannot write %s: %w; run lcctl migrate again", o.Path, ErrChanged)
	}
	now, err := io.ReadAll(io.LimitReader(f, int64(len(o.Data))+1))
	if err != nil || !bytes.Equal(now, o.Data) {
		return fmt.Errorf("cannot write %s: %w; run lcctl migrate again", o.Path, ErrChanged)
	}
	return nil
}

func (o *Original) writeBackup(fsys FS, path string) error {
	if cur, err := readAtMost(path, int64(len(o.Data))+1); err == nil {
		if bytes.Equal(cur, o.Data) {
			return nil
		}
		return fmt.Errorf("cannot back up %s: %s: %w; move it away first", o.Path, path, ErrBackupExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot back up %s to %s: %w", o.Path, path, readlimit.Cause(err))
	}
	if err := o.write(fsys, path, o.Data, nil); err != nil {
		return fmt.Errorf("cannot back up %s: %w", o.Path, err)
	}
	return nil
}

// write creates path atomically with data, o's mode and owner; check runs
// just before the rename and can veto it.
func (o *Original) write(fsys FS, path string, data []byte, check func() error) (err error) {
	p, err := fsys.NewPending(path, o.Mode&fs.ModePerm)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, readlimit.Cause(err))
	}
	defer func() {
		if err != nil {
			_ = p.Cleanup()
		}
	}()
	if _, err := p.Write(data); err != nil {
		return fmt.Errorf("cannot write %s: %w (the original is unchanged)", path, readlimit.Cause(err))
	}
	if o.Mode&^fs.ModePerm != 0 {
		if err := p.Chmod(o.Mode); err != nil {
			return fmt.Errorf("cannot write %s: setting mode %v: %w", path, o.Mode, readlimit.Cause(err))
		}
	}
	if o.UID >= 0 && o.GID >= 0 && (o.UID != os.Getuid() || o.GID != os.Getgid()) {
		if err := p.Chown(o.UID, o.GID); err != nil {
			return fmt.Errorf("cannot write %s: keeping its owner %d:%d: %w (the original is unchanged)", path, o.UID, o.GID, readlimit.Cause(err))
		}
	}
	// fsync before the last check, so that the check is the last thing
	// before close and rename (see Replace); CloseAtomicallyReplace syncs
	// again, with nothing left to flush.
	if err := p.Sync(); err != nil {
		return fmt.Errorf("cannot write %s: %w (the original is unchanged)", path, readlimit.Cause(err))
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := p.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("cannot write %s: %w (the original is unchanged)", path, readlimit.Cause(err))
	}
	return nil
}

// readAtMost reads up to n bytes of path: enough to compare an existing
// backup with the original (one byte more tells a longer file apart),
// without reading an endless file (a FILE.bak linked to /dev/zero) whole.
func readAtMost(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
