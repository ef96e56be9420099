package processtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// members are the olric-server processes of the suite.
var members []*member

func TestMain(m *testing.M) {
	testscript.Main(suite{m}, map[string]func(){"lcctl": lcctlMain})
}

// lcctlMain is lcctl's main, run when a script executes "lcctl".
func lcctlMain() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], ui.SystemStreams())
	stop()
	os.Exit(code)
}

// suite wraps testing.M so the cluster is started only by the top-level
// test binary, never by the copies testscript runs as "lcctl".
type suite struct{ m *testing.M }

// envDeathChild and envOlricBin run the test binary as the child of
// TestMembersDieWithTheTestProcess: no cluster, olricBin from
// envOlricBin, envDeathChild the directory to work in.
const (
	envDeathChild = "LCCTL_PROCESSTEST_DEATH_CHILD"
	envOlricBin   = "LCCTL_PROCESSTEST_OLRIC_BIN"
)

func (s suite) Run() int {
	if os.Getenv(envDeathChild) != "" {
		olricBin = os.Getenv(envOlricBin)
		return s.m.Run()
	}
	dir, err := os.MkdirTemp("", "lcctl-olric-suite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "processtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := startCluster(dir, 2); err != nil {
		fmt.Fprintln(os.Stderr, "processtest: cannot start the olric-server cluster:", err)
		stopCluster(true)
		return 1
	}
	// The fault tests mostly wait (for members to be declared dead, for
	// the routing table to settle), each on its own olric-server
	// processes: run four at a time unless -parallel was given.
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "4")
	}
	code := s.m.Run()
	stopCluster(code != 0)
	return code
}

type member struct {
	name, memberlist string
	cfg              string // its configuration file (restart starts it again)
	cmd              *exec.Cmd
	log              *syncBuffer
	done             chan struct{} // closed when the process has exited
	err              error         // its exit status, set before done is closed
}

// startCluster builds olric-server and starts n members, the second and
// later ones joining the first.
func startCluster(dir string, n int) error {
	bin := filepath.Join(dir, "olric-server")
	build := exec.Command(goTool(), "build", "-o", bin, "github.com/olric-data/olric/cmd/olric-server")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build github.com/olric-data/olric/cmd/olric-server: %v\n%s", err, out)
	}
	olricBin = bin
	var peers []string
	for i := 0; i < n; i++ {
		m, err := launchMember(dir, fmt.Sprintf("olric-%d.yaml", i+1), peers, 1, false)
		if err != nil {
			return err
		}
		members = append(members, m)
		peers = append(peers, m.memberlist)
		if err := waitMembers(members, i+1); err != nil {
			return err
		}
	}
	return nil
}

// olricBin is the olric-server binary TestMain built.
var olricBin string

// launchMember starts one olric-server process with a configuration file
// written to dir/cfgName, joining peers (memberlist addresses). On Linux
// the process is killed when the test process dies (memberProcAttr).
func launchMember(dir, cfgName string, peers []string, replicas int, fast bool) (*member, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	mlPort, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, cfgName)
	m := &member{name: "127.0.0.1:" + strconv.Itoa(port), memberlist: "127.0.0.1:" + strconv.Itoa(mlPort), cfg: cfg, log: &syncBuffer{}, done: make(chan struct{})}
	if err := os.WriteFile(cfg, []byte(clusterConfigYAML(port, mlPort, peers, replicas, fast)), 0o600); err != nil {
		return nil, err
	}
	m.cmd = exec.Command(olricBin, "-c", cfg)
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	m.cmd.SysProcAttr = memberProcAttr() // dies with the test process (Linux)
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start olric-server %s: %w", cfgName, err)
	}
	go func() { m.err = m.cmd.Wait(); close(m.done) }()
	return m, nil
}

// syncBuffer is a bytes.Buffer safe for the process's two output pipes and
// a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// clusterConfigYAML is an olric-server configuration with the gateway's
// settings (271 partitions, quorums of 1, no password) on loopback, with a
// replica count (copies of each entry; 1 in the gateway chart) and, with
// fast, a memberlist that declares a silent member dead within about a
// second and a balancer that runs every second, so the fault tests do not
// wait on production timeouts.
func clusterConfigYAML(port, mlPort int, peers []string, replicas int, fast bool) string {
	var p strings.Builder
	for _, peer := range peers {
		fmt.Fprintf(&p, "\n    - %q", peer)
	}
	serverFast, mlFast := "", ""
	if fast {
		serverFast = "\n  triggerBalancerInterval: 1s"
		mlFast = "\n  probeInterval: 300ms\n  probeTimeout: 200ms\n  suspicionMult: 2\n  gossipInterval: 100ms\n  pushPullInterval: 5s"
	}
	peerList := " []"
	if len(peers) > 0 {
		peerList = p.String()
	}
	return fmt.Sprintf(`server:
  bindAddr: 127.0.0.1
  bindPort: %d
  keepAlivePeriod: 300s
  bootstrapTimeout: 10s
  partitionCount: 271
  replicaCount: %d
  writeQuorum: 1
  readQuorum: 1
  readRepair: false
  replicationMode: 0
  memberCountQuorum: 1
  routingTablePushInterval: 1m
  leaveTimeout: 1s%s
client:
  dialTimeout: 2s
  readTimeout: 3s
  writeTimeout: 3s
logging:
  verbosity: 2
  level: WARN
  output: stderr
memberlist:
  environment: local
  bindAddr: 127.0.0.1
  bindPort: %d
  joinRetryInterval: 100ms
  maxJoinAttempts: 50%s
  peers:%s
dmaps:
  engine:
    name: kvstore
    config:
      tableSize: 524288
`, port, replicas, serverFast, mlPort, mlFast, peerList)
}

// waitMembers waits until every started member answers and the cluster
// has n members.
func waitMembers(members []*member, n int) error {
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		for _, m := range members {
			select {
			case <-m.done:
				return fmt.Errorf("olric-server %s exited: %v\n%s", m.name, m.err, m.log)
			default:
			}
		}
		ok := true
		for _, m := range members {
			c, err := store.Connect(context.Background(), store.Options{Addrs: []string{m.name}, Attempts: 1, DialTimeout: time.Second})
			if err != nil {
				ok, last = false, err
				break
			}
			ms, err := c.Members(context.Background())
			_ = c.Close()
			if err != nil || len(ms) != n {
				ok, last = false, fmt.Errorf("%s sees %d members (%v)", m.name, len(ms), err)
				break
			}
		}
		if ok {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the cluster did not reach %d members: %v", n, last)
}

// stopCluster stops every member with SIGTERM, then SIGKILL after 10s, and
// prints their logs when verbose.
func stopCluster(verbose bool) {
	for _, m := range members {
		if m.cmd.Process != nil {
			_ = m.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, m := range members {
		select {
		case <-m.done:
		case <-time.After(10 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
		if verbose {
			fmt.Fprintf(os.Stderr, "--- olric-server %s log:\n%s\n", m.name, m.log)
		}
	}
	members = nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// goTool finds the go command: $GOROOT/bin/go of the toolchain running the
// tests when it exists, else go on $PATH.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestScripts(t *testing.T) {
	if len(members) == 0 {
		t.Fatal("no olric-server members are running")
	}
	var addrs []string
	for _, m := range members {
		addrs = append(addrs, m.name)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv(cli.EnvOlricAddrs, strings.Join(addrs, ","))
			env.Setenv("MEMBER1", addrs[0])
			env.Setenv("MEMBER2", addrs[1])
			// Every script works in its own DMap.
			env.Setenv(cli.EnvOlricDMap, filepath.Base(env.WorkDir)) // "script-<name>"
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GORACE", testutil.SubprocessGORACE()) // no 1 s exit wait per exec under -race
			return nil
		},
	})
}

// TestMembersAreSeparateProcesses guards the suite's premise: the members
// are other processes, so lcctl is a client-only process here.
func TestMembersAreSeparateProcesses(t *testing.T) {
	for _, m := range members {
		if m.cmd.Process == nil || m.cmd.Process.Pid == os.Getpid() {
			t.Fatalf("member %s is not a separate process", m.name)
		}
		if err := m.cmd.Process.Signal(syscall.Signal(0)); errors.Is(err, os.ErrProcessDone) {
			t.Fatalf("member %s has exited:\n%s", m.name, m.log)
		}
	}
}
