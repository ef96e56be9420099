package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/lcctl/lcctl/internal/readlimit"
	"github.com/lcctl/lcctl/internal/ui"
)

// readLimited reads r up to limit bytes; more is an error that names what
// was read (a file or standard input).
func readLimited(r io.Reader, what string, limit int64) ([]byte, error) {
	if f, ok := r.(*os.File); !ok || !isRegular(f) {
		waitingFor.Store(&what)
		defer waitingFor.Store(nil)
	}
	data, err := readlimit.ReadAll(r, limit)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", what, err)
	}
	return data, nil
}

// readFlagInput is readInput for the file that flag (its name without
// dashes) names: the error starts with the flag, "--snapshot: failed to
// read nope.yaml: no such file or directory", so an operator who gave
// several files knows which flag to fix.
func readFlagInput(env *Env, flag, name string, limit int64) ([]byte, error) {
	data, err := readInput(env, name, limit)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	return data, nil
}

// readInput reads one named input: "-" is the command's standard input;
// anything else a regular file, refused without reading when larger than
// limit bytes.
func readInput(env *Env, name string, limit int64) ([]byte, error) {
	if name == "-" {
		return readLimited(env.In, "standard input", limit)
	}
	f, err := readlimit.Open(name)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", name, readlimit.Cause(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", name, readlimit.Cause(err))
	}
	if st.IsDir() {
		return nil, fmt.Errorf("failed to read %s: is a directory", name)
	}
	if err := readlimit.CheckSize(st, limit); err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", name, err)
	}
	return readLimited(f, name, limit)
}

// expandArgs replaces each directory argument by the files below it whose
// extensions are in exts (sorted, recursive), plus any directory that
// cannot be read (so that it is reported); other arguments stay as given.
// A readable directory without such files is an error.
func expandArgs(args []string, exts []string) ([]string, error) {
	inputs, err := expandInputs(args, exts)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(inputs))
	for i, in := range inputs {
		if in.EmptyDir {
			return nil, fmt.Errorf("%s: no %s files in this directory", in.Name, strings.Join(exts, "/"))
		}
		if in.Special != "" {
			return nil, fmt.Errorf("%s: %s (a directory search reads regular files only)", ui.Printable(in.Name), in.Special)
		}
		out[i] = in.Name
	}
	return out, nil
}

// input is one file to read, as found by expandInputs.
type input struct {
	// Name is the path as given, or below a directory argument; "-" is
	// standard input.
	Name string
	// FromDir is true for a file found by searching a directory argument
	// (the user did not name it).
	FromDir bool
	// EmptyDir is true for a readable directory argument that holds no
	// file with one of the extensions searched for.
	EmptyDir bool
	// Special, for a name found by a search, says why it is not read: it
	// is not a regular file ("a named pipe", "a link to a directory").
	// Opening a named pipe would wait for a writer forever.
	Special string
}

// notRegular says why the entry p found by a directory search is not a
// regular file to read, following symbolic links; "" when it is one (or
// when it cannot be inspected: reading it then reports the error).
func notRegular(p string, d fs.DirEntry) string {
	mode := d.Type()
	link := mode&fs.ModeSymlink != 0
	if link {
		st, err := os.Stat(p)
		if err != nil {
			return ""
		}
		mode = st.Mode().Type()
	}
	what := fileKind(mode)
	if what == "" {
		return ""
	}
	if link {
		return "a link to " + what + ", not read"
	}
	return what + ", not read"
}

// fileKind names what a file of the given mode is when it is not a
// regular file ("a directory", "a named pipe", "a socket", "a device",
// "a special file"); "" for a regular file.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return ""
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// expandInputs is expandArgs without the empty-directory error: a readable
// directory argument holding no file with one of exts stays in the list, in
// argument order, marked EmptyDir.
func expandInputs(args []string, exts []string) (inputs []input, err error) {
	for _, a := range args {
		if a == "-" {
			inputs = append(inputs, input{Name: a})
			continue
		}
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			inputs = append(inputs, input{Name: a})
			continue
		}
		// A symbolic link to a directory (a Kubernetes volume, a
		// deploy symlink) is searched too: WalkDir does not follow a
		// link given as its root, but does follow "link/".
		root := a
		if lst, err := os.Lstat(a); err == nil && lst.Mode()&fs.ModeSymlink != 0 && !strings.HasSuffix(a, string(filepath.Separator)) {
			root = a + string(filepath.Separator)
		}
		var found []string
		var special []input
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				// An unreadable directory (the argument or an entry below
				// it) is reported as an input that cannot be read (LC1000);
				// the rest is checked.
				found = append(found, p)
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.IsDir() && slices.Contains(exts, strings.ToLower(filepath.Ext(p))) {
				if why := notRegular(p, d); why != "" {
					special = append(special, input{Name: p, FromDir: true, Special: why})
					return nil
				}
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("failed to read directory %s: %w", a, readlimit.Cause(err))
		}
		if len(found) == 0 && len(special) == 0 {
			inputs = append(inputs, input{Name: a, EmptyDir: true})
			continue
		}
		inputs = append(inputs, special...)
		slices.Sort(found)
		for _, f := range found {
			inputs = append(inputs, input{Name: f, FromDir: true})
		}
	}
	return inputs, nil
}

// waitingFor names the input a command is reading (readLimited), or nil:
// when Ctrl-C or SIGTERM arrives while lcctl waits for more of a pipe or a
// terminal, Main says what it is waiting for (the first signal used to go
// unnoticed).
var waitingFor atomic.Pointer[string]

func isRegular(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}
