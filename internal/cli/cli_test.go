package cli_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// TestMain lets testscript run `lcctl` as a subprocess that is this test
// binary calling cli.Main.
//
// `want-exit CODE lcctl ARGS...` runs lcctl the same way and succeeds only
// when its exit status is exactly CODE, so scripts can tell 1 (findings)
// from 2 (usage or unreadable input); its output is lcctl's.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"lcctl": func() { os.Exit(cli.Main(context.Background(), os.Args[1:], ui.SystemStreams())) },
		"want-exit": func() {
			if len(os.Args) < 3 || os.Args[2] != "lcctl" {
				fmt.Fprintln(os.Stderr, "usage: want-exit CODE lcctl ARGS...")
				os.Exit(3)
			}
			want, err := strconv.Atoi(os.Args[1])
			if err != nil {
				fmt.Fprintln(os.Stderr, "want-exit: bad code:", err)
				os.Exit(3)
			}
			if got := cli.Main(context.Background(), os.Args[3:], ui.SystemStreams()); got != want {
				fmt.Fprintf(os.Stderr, "want-exit: lcctl exited %d, want %d\n", got, want)
				os.Exit(1)
			}
			os.Exit(0)
		},
	})
}

// TestScript runs every testdata/script/*.txtar. Scripts get NO_COLOR=1,
// GORACE with atexit_sleep_ms=0 (testutil.SubprocessGORACE: under -race
// each `exec lcctl` otherwise sleeps a second as it exits),
// $SHARED (the read-only shared folder: specs, conformance cases,
// upstream examples), $REPO (the repository root) and the commands of
// scriptCmds. Any command's scripts can live here.
func TestScript(t *testing.T) {
	shared := testutil.SharedDir(t)
	repo := testutil.RepoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GORACE", testutil.SubprocessGORACE())
			env.Setenv("SHARED", shared)
			env.Setenv("REPO", repo)
			return nil
		},
		Cmds:                scriptCmds,
		RequireExplicitExec: true,
		// LCCTL_UPDATE_SCRIPTS=1 rewrites the files that `cmp stdout
		// FILE` compares against, for a deliberate change of output.
		UpdateScripts:      os.Getenv("LCCTL_UPDATE_SCRIPTS") != "",
		RequireUniqueNames: true,
	})
}

// scriptCmds are helper commands for scripts that need inputs too large
// or too binary for a txtar archive.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// gen-lbconfig MODELS FILE: a valid lb-config with MODELS models.
	"gen-lbconfig": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: gen-lbconfig MODELS FILE")
		}
		n, err := strconv.Atoi(args[0])
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), testutil.GenerateLBConfig(n), 0o644))
	},
	// gen-bytes SIZE FILE [SEED]: SIZE pseudo-random bytes (binary data).
	// mkfifo PATH makes a named pipe (Unix only; scripts guard with [unix]).
	"mkfifo": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: mkfifo PATH")
		}
		ts.Check(mkfifo(ts.MkAbs(args[0])))
	},
	"gen-bytes": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 2 || len(args) > 3 {
			ts.Fatalf("usage: gen-bytes SIZE FILE [SEED]")
		}
		size, err := strconv.Atoi(args[0])
		ts.Check(err)
		seed := uint64(1)
		if len(args) == 3 {
			seed, err = strconv.ParseUint(args[2], 10, 64)
			ts.Check(err)
		}
		r := rand.New(rand.NewPCG(seed, seed))
		buf := make([]byte, size)
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), buf, 0o644))
	},
	// file-size FILE MIN: fail unless FILE has at least MIN bytes.
	"file-size": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: file-size FILE MIN")
		}
		st, err := os.Stat(ts.MkAbs(args[0]))
		ts.Check(err)
		min, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		if (st.Size() >= min) == neg {
			ts.Fatalf("%s has %d bytes (want at least %d: %v)", filepath.Base(args[0]), st.Size(), min, !neg)
		}
		fmt.Fprintf(ts.Stdout(), "%d\n", st.Size())
	},
}
