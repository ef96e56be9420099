package cli_test

import (
	"strings"
	"testing"
)

// Credentials in a metrics URL are never printed: check metrics and
// preflight echoed the password in text and three times in JSON.
func TestMetricsURLCredentialsRedacted(t *testing.T) {
	srv := serveFixtures(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, path := range []string{"gateway-healthy.prom", "no-such-fixture", "empty.prom"} {
		withPW := "http://user:SECRETPW@" + host + "/" + path
		token := "http://SECRETTOKEN@" + host + "/" + path
		for _, args := range [][]string{
			{"check", "metrics", "--gateway", withPW},
			{"check", "metrics", "--stargate", token},
			{"preflight", "--stage", "1", "--stargate-metrics", withPW},
			{"preflight", "--stage", "3", "--gateway-metrics", token},
		} {
			for _, out := range []string{"text", "json"} {
				_, stdout, stderr := runLcctlStdin(t, "", nil, append(args, "-o", out)...)
				if strings.Contains(stdout+stderr, "SECRET") {
					t.Errorf("%s -o %s printed the credentials:\nstdout %s\nstderr %s", strings.Join(args, " "), out, stdout, stderr)
				}
				if !strings.Contains(stdout+stderr, "xxxxx@"+host) {
					t.Errorf("%s -o %s: the source is not named redacted:\nstdout %s\nstderr %s", strings.Join(args, " "), out, stdout, stderr)
				}
			}
		}
	}
}
