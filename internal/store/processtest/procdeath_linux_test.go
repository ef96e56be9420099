//go:build linux

package processtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// memberProcAttr is how launchMember starts an olric-server: in its own
// process group (a Ctrl-C at the terminal reaches the test binary, whose
// cleanup or death stops the member, not the member behind its back),
// and killed by the kernel when the test process dies (Pdeathsig,
// prctl(PR_SET_PDEATHSIG)): a `go test -timeout` panic or a kill -9
// skips every cleanup, and the members were left running. The signal is
// tied to the thread that started the member; the Go runtime keeps its
// threads for the life of the process (launchMember is never called from
// a goroutine that locks its thread and exits), so it comes when the
// process dies.
func memberProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// TestMembersDieWithTheTestProcess runs this test binary again as a child
// (envDeathChild) that starts one olric-server, waits until it listens,
// and then hangs until its own -test.timeout panics, as a stuck test
// does: the member must die with it, though no cleanup ran.
func TestMembersDieWithTheTestProcess(t *testing.T) {
	if dir := os.Getenv(envDeathChild); dir != "" {
		runDeathChild(t, dir)
		return
	}
	if olricBin == "" {
		t.Fatal("olric-server was not built")
	}
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestMembersDieWithTheTestProcess$", "-test.timeout=8s")
	child.Env = append(os.Environ(), envDeathChild+"="+dir, envOlricBin+"="+olricBin)
	var out bytes.Buffer
	child.Stdout, child.Stderr = &out, &out
	err := child.Run()
	b, rerr := os.ReadFile(filepath.Join(dir, "member.pid"))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if rerr != nil || perr != nil {
		t.Fatalf("the child started no member (%v): %v\n%s", err, errors.Join(rerr, perr), out.String())
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // should it have survived
	if !strings.Contains(out.String(), "panic: test timed out after 8s") {
		t.Fatalf("the child did not end on its -timeout panic (%v):\n%s", err, out.String())
	}
	for deadline := time.Now().Add(5 * time.Second); processAlive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("olric-server (pid %d) is still running 5 s after the test process that started it died", pid)
		}
	}
}

// runDeathChild is TestMembersDieWithTheTestProcess in the child: one
// member, its pid in dir/member.pid once it listens, then a hang.
func runDeathChild(t *testing.T, dir string) {
	m, err := launchMember(dir, "olric-1.yaml", nil, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitListening(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "member.pid"), []byte(strconv.Itoa(m.cmd.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Hour) // until -test.timeout panics
}

// processAlive reports whether pid runs: it exists and is not a zombie
// (a member whose parent died is reaped by whoever adopts it, maybe
// late).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "pid (comm) state …": the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
