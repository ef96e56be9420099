package livetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvPrometheus names the prometheus binary to use instead of the one on
// PATH.
const EnvPrometheus = "LCCTL_PROMETHEUS"

// ScrapeInterval is the test Prometheus's scrape interval: short, so a
// changed value is scraped within a fraction of a second.
const ScrapeInterval = 200 * time.Millisecond

// Job is one scrape job: its name, its targets (host:port) and the labels
// every target gets (e.g. {"cluster": "cluster-a"}).
type Job struct {
	Name    string
	Targets []Target
}

// Target is one scraped endpoint and its target labels.
type Target struct {
	Addr   string
	Labels map[string]string
}

// Prometheus is a real Prometheus server started for one test.
type Prometheus struct {
	// URL is its base URL (http://127.0.0.1:PORT).
	URL string
}

// StartPrometheus starts the prometheus binary ($LCCTL_PROMETHEUS, else
// `prometheus` on PATH) on a loopback port with a generated config that
// scrapes jobs every ScrapeInterval, waits until it is ready, and stops it
// when the test ends. A missing binary FAILS the test with how to install
// it (the tests need a real server; they never skip).
func StartPrometheus(tb testing.TB, jobs []Job) *Prometheus {
	tb.Helper()
	bin := os.Getenv(EnvPrometheus)
	if bin == "" {
		p, err := exec.LookPath("prometheus")
		if err != nil {
			tb.Fatalf("the prometheus binary is not on PATH: these tests run a real Prometheus server. Install it (Debian/Ubuntu: apt-get update && apt-get install -y prometheus; .ci/run does this) or set %s to its path", EnvPrometheus)
		}
		bin = p
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		tb.Fatalf("the prometheus binary %s (from $%s) cannot be run: %v. Install it (Debian/Ubuntu: apt-get update && apt-get install -y prometheus) or point $%s at it", bin, EnvPrometheus, err, EnvPrometheus)
	}
	dir := tb.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: 10s\nscrape_configs:\n",
		ScrapeInterval, ScrapeInterval*3/4)
	for _, j := range jobs {
		fmt.Fprintf(&cfg, "  - job_name: %q\n    static_configs:\n", j.Name)
		for _, t := range j.Targets {
			fmt.Fprintf(&cfg, "      - targets: [%q]\n", t.Addr)
			if len(t.Labels) > 0 {
				cfg.WriteString("        labels:\n")
				for k, v := range t.Labels {
					fmt.Fprintf(&cfg, "          %s: %q\n", k, v)
				}
			}
		}
	}
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	addr := freeAddr(tb)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		cancel()
		tb.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		cancel()
		<-done
		_ = logFile.Close()
	})
	p := &Prometheus{URL: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			tb.Fatalf("prometheus exited before it was ready:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("prometheus on %s not ready after 30 s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

func freeAddr(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Query runs an instant PromQL query now and returns each series' labels
// and value.
func (p *Prometheus) Query(tb testing.TB, q string) []QueryResult {
	tb.Helper()
	resp, err := http.Get(p.URL + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		tb.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		tb.Fatalf("query %s: %v %s", q, err, body.Error)
	}
	var out []QueryResult
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, _ := strconv.ParseFloat(s, 64)
		out = append(out, QueryResult{Labels: r.Metric, Value: v})
	}
	return out
}

// QueryResult is one series of an instant query.
type QueryResult struct {
	Labels map[string]string
	Value  float64
}

// WaitFor polls q until ok accepts its result (or fails the test after
// 20 s).
func (p *Prometheus) WaitFor(tb testing.TB, q string, ok func([]QueryResult) bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ok(p.Query(tb, q)) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("prometheus: %s never gave the expected result: %v", q, p.Query(tb, q))
		}
		time.Sleep(ScrapeInterval / 4)
	}
}
