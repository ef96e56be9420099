package store_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

func TestConnectUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = store.Connect(context.Background(), store.Options{Addrs: []string{closed, "127.0.0.1:1"}, DialTimeout: 300 * time.Millisecond})
	if !errors.Is(err, store.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	for _, s := range []string{"cannot connect to Olric: unreachable: " + closed + ": ", "; 127.0.0.1:1: ", "connection refused", "Where to run lcctl"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	// The kind is named once, not again after every seed.
	if n := strings.Count(err.Error(), "unreachable"); n != 1 {
		t.Errorf("error %q says unreachable %d times, want once", err, n)
	}
	// Each seed is named once, not again in its dial error.
	for _, a := range []string{closed, "127.0.0.1:1"} {
		if n := strings.Count(err.Error(), a); n != 1 {
			t.Errorf("error %q names %s %d times, want once", err, a, n)
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v to give up on two refused seeds", el)
	}
}

// fakeServer accepts connections on loopback and answers every read with
// reply, or never answers when reply is nil. It stops when the test ends.
func fakeServer(t *testing.T, reply []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					if reply != nil {
						_, _ = c.Write(reply)
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func TestConnectTimeout(t *testing.T) {
	addr := fakeServer(t, nil)
	start := time.Now()
	_, err := store.Connect(context.Background(), store.Options{Addrs: []string{addr}, RequestTimeout: 200 * time.Millisecond})
	if !errors.Is(err, store.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v with a 200ms request timeout", el)
	}
	// The caller's context bounds Connect too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = store.Connect(ctx, store.Options{Addrs: []string{addr}, RequestTimeout: 10 * time.Second})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %v, want the context's deadline", err, time.Since(start))
	}
}

func TestConnectNotOlric(t *testing.T) {
	// A server that answers every read with a RESP integer, a reply no
	// Olric command gives.
	addr := fakeServer(t, []byte(":1\r\n"))
	start := time.Now()
	_, err := store.Connect(context.Background(), store.Options{Addrs: []string{addr}})
	if err == nil || !strings.Contains(err.Error(), "cannot connect to Olric") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestPassword(t *testing.T) {
	ctx := context.Background()
	n, err := store.StartNode(ctx, store.NodeOptions{Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	for _, pw := range []string{"", "wrong"} {
		_, err := store.Connect(ctx, store.Options{Addrs: []string{n.Addr()}, Password: pw})
		if !errors.Is(err, store.ErrAuth) {
			t.Errorf("password %q: err = %v, want ErrAuth", pw, err)
		}
	}
	c, err := store.Connect(ctx, store.Options{Addrs: []string{n.Addr()}, Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	// A password against a member without one fails too (olric.md §3.4).
	open, err := store.StartNode(ctx, store.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Shutdown(context.Background())
	if _, err := store.Connect(ctx, store.Options{Addrs: []string{open.Addr()}, Password: "s3cret"}); !errors.Is(err, store.ErrAuth) {
		t.Errorf("password against a member without one: %v", err)
	}
	if _, err := store.Connect(ctx, store.Options{Addrs: []string{open.Addr()}, Password: " s3cret"}); err == nil || !strings.Contains(err.Error(), "whitespace") {
		t.Errorf("password with a space: %v", err)
	}
}

// TestTLSProxyAndAddrMap reaches a member only through a TLS-terminating
// proxy, as an operator would put one in front of Olric (which has no TLS
// of its own), with the member's name mapped to the proxy.
func TestTLSProxyAndAddrMap(t *testing.T) {
	ctx := context.Background()
	n, err := store.StartNode(ctx, store.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	cert, pool := selfSigned(t)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, err := net.Dial("tcp", n.Addr())
				if err != nil {
					return
				}
				defer b.Close()
				go func() { _, _ = io.Copy(b, c) }()
				_, _ = io.Copy(c, b)
			}()
		}
	}()
	proxy := l.Addr().String()
	opts := store.Options{Addrs: []string{proxy}, TLS: &tls.Config{RootCAs: pool, ServerName: "olric.test", MinVersion: tls.VersionTLS12},
		AddrMap: map[string]string{n.Addr(): proxy}}
	c, err := store.Connect(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	// Without the mapping the member is dialled by its name, with TLS, and
	// the plain-text member does not speak TLS.
	opts.AddrMap = nil
	if c2, err := store.Connect(ctx, opts); err == nil {
		_, err = c2.Probe(ctx)
		c2.Close()
		if err == nil {
			t.Fatal("a TLS client reached a plain-text member without the proxy")
		}
	}
	// A certificate the client does not trust is refused.
	opts.AddrMap = map[string]string{n.Addr(): proxy}
	opts.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	if _, err := store.Connect(ctx, opts); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: %v", err)
	}
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "olric.test"}, DNSNames: []string{"olric.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// tcpProxy forwards every connection on a loopback port to target until
// the test ends.
func tcpProxy(t *testing.T, target string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer b.Close()
				go func() { _, _ = io.Copy(b, c) }()
				_, _ = io.Copy(c, b)
			}()
		}
	}()
	return l.Addr().String()
}

// A member mapped (--map-addr) to an address that accepts and never
// answers: the seed answers, the member does not, and the error names the
// member and where it was dialled, not only the seed.
func TestConnectAddrMapBlackHoleNamesMember(t *testing.T) {
	ctx := context.Background()
	n, err := store.StartNode(ctx, store.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	seed := tcpProxy(t, n.Addr())
	hole := fakeServer(t, nil)
	_, err = store.Connect(ctx, store.Options{Addrs: []string{seed}, RequestTimeout: 300 * time.Millisecond,
		AddrMap: map[string]string{n.Addr(): hole}})
	if !errors.Is(err, store.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	for _, s := range []string{"member " + n.Addr(), "dialled at " + hole} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}
