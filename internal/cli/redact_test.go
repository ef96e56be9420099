package cli_test

import (
	"net/http"
	"net/http/httptest"
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

// A secret in a metrics URL's query string (?token=, ?access_token=) is
// never printed either, nor is one in a redirect's target (net/http masks
// a redirect's password, not its query): check metrics, preflight and
// snapshot echoed it in text, stderr and JSON. The parameter names stay.
func TestMetricsURLQuerySecretsRedacted(t *testing.T) {
	srv := serveFixtures(t)
	// Redirects to a port nothing listens on: the transport error quotes
	// the target URL.
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/metrics?token=QSECRET3&job=x", http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	for _, path := range []string{"gateway-healthy.prom", "no-such-fixture", "empty.prom"} {
		token := srv.URL + "/" + path + "?token=QSECRET1"
		both := strings.Replace(srv.URL, "http://", "http://user:SECRETPW@", 1) + "/" + path + "?a=1&access_token=QSECRET2"
		for _, args := range [][]string{
			{"check", "metrics", "--gateway", token},
			{"check", "metrics", "--stargate", both},
			{"check", "metrics", "--gateway", redirect.URL + "/m?token=QSECRET4"},
			{"preflight", "--stage", "1", "--stargate-metrics", both},
			{"preflight", "--stage", "3", "--gateway-metrics", token},
			{"preflight", "--stage", "3", "--gateway-metrics", redirect.URL + "/m?token=QSECRET4"},
			{"snapshot", "--model", "m", "--pylon", "a=" + token},
			{"snapshot", "--model", "m", "--pylon", "a=" + redirect.URL + "/m?token=QSECRET4"},
			{"snapshot", "--model", "m", "--prometheus", srv.URL + "/?access_token=QSECRET5", "--cluster-label", "cluster"},
			{"snapshot", "--model", "m", "--prometheus", redirect.URL + "/?access_token=QSECRET5", "--cluster-label", "cluster"},
		} {
			for _, out := range []string{"text", "json"} {
				_, stdout, stderr := runLcctlStdin(t, "", nil, append(args, "-o", out)...)
				if strings.Contains(stdout+stderr, "SECRET") {
					t.Errorf("%s -o %s printed a secret:\nstdout %s\nstderr %s", strings.Join(args, " "), out, stdout, stderr)
				}
				if !strings.Contains(stdout+stderr, "token=xxxxx") {
					t.Errorf("%s -o %s: the source is not named redacted:\nstdout %s\nstderr %s", strings.Join(args, " "), out, stdout, stderr)
				}
			}
		}
	}
}

// The errors of net/http and net/url name a metrics URL with its password
// as lcctl does everywhere (xxxxx, net/url's URL.Redacted), not as
// net/http's "***", and a URL net/url cannot parse is not quoted with its
// password: every command that reads metrics or Prometheus over HTTP.
func TestHTTPErrorsRedactLikeLcctl(t *testing.T) {
	refused := "http://admin:SECRETPW@127.0.0.1:1"
	for _, args := range [][]string{
		{"check", "metrics", "--gateway", refused + "/metrics"},
		{"preflight", "--stage", "3", "--gateway-metrics", refused + "/metrics"},
		{"preflight", "--stage", "3", "--gateway-metrics", refused + "/%zz"},
		{"snapshot", "--model", "m", "--pylon", "a=" + refused + "/metrics"},
		{"explain", "--model", "m", "--pylon", "a=" + refused + "/metrics"},
		{"explain", "--model", "m", "--cluster-label", "c", "--prometheus", refused},
		{"snapshot", "--model", "m", "--cluster-label", "c", "--prometheus", refused},
	} {
		code, stdout, stderr := runLcctlStdin(t, "", nil, args...)
		all := stdout + stderr
		if code == 0 || strings.Contains(all, "SECRET") || strings.Contains(all, "***") || !strings.Contains(all, "xxxxx@127.0.0.1:1") {
			t.Errorf("%s: exit %d, want a failure naming the URL with xxxxx only:\nstdout %s\nstderr %s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}
