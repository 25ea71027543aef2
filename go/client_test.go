// SPDX-License-Identifier: MIT

// The client against real tenured processes (internal/testserver): safe
// time, several URLs (the next one only when nothing was sent), a frozen
// server (SIGSTOP) timing out without a retry elsewhere, bearer
// authentication and TLS.

package tenure_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"tenure"
	"tenure/internal/testserver"
)

func newClient(t *testing.T, o tenure.Options) *tenure.Client {
	t.Helper()
	c, err := tenure.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestSafeTimeCountsFromTheSendMinusTheMargin(t *testing.T) {
	srv := testserver.Start(t)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	l, err := c.Acquire(ctx, "safe/a", tenure.AcquireOptions{TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// At most TTL - TTL/10 (the default margin).
	if s := l.SafeFor(); s <= 0 || s > 9*time.Second {
		t.Fatalf("safe for %v after a 10 s grant", s)
	}
	fixed := newClient(t, tenure.Options{URLs: []string{srv.URL}, SafetyMargin: 4 * time.Second})
	l2, err := fixed.Acquire(ctx, "safe/b", tenure.AcquireOptions{TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s := l2.SafeFor(); s <= 0 || s > 6*time.Second {
		t.Fatalf("safe for %v with a 4 s margin on a 10 s grant", s)
	}
	if err := l.Release(ctx); err != nil || l.Held() || !errors.Is(l.Err(), tenure.ErrReleased) {
		t.Fatalf("after release: %v, held %v, err %v", err, l.Held(), l.Err())
	}
}

func TestAnErrorNamesItsKindAndDetails(t *testing.T) {
	srv := testserver.Start(t)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, OwnerID: "first"})
	ctx := context.Background()
	l, err := c.Acquire(ctx, "kinds/a", tenure.AcquireOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Acquire(ctx, "kinds/a", tenure.AcquireOptions{Owner: "second", TTL: 5 * time.Second})
	var e *tenure.Error
	if !errors.Is(err, tenure.ErrHeld) || !errors.As(err, &e) || e.Status != 409 ||
		e.Holder == nil || e.Holder.OwnerID != "first" || e.Holder.Token != l.Token {
		t.Fatalf("held: %#v", err)
	}
	if errors.Is(err, tenure.ErrLost) {
		t.Fatal("held is not lost")
	}
	if _, err := c.Get(ctx, "kinds/free"); !errors.Is(err, tenure.ErrNotFound) {
		t.Fatalf("get of a free name: %v", err)
	}
	if _, err := c.Acquire(ctx, "kinds/b", tenure.AcquireOptions{TTL: 5 * time.Hour}); !errors.Is(err, tenure.ErrBadRequest) {
		t.Fatalf("a TTL above the server's maximum: %v", err)
	}
	if _, err := c.Acquire(ctx, "", tenure.AcquireOptions{TTL: time.Second}); !errors.Is(err, tenure.ErrInvalid) {
		t.Fatalf("an empty name: %v", err)
	}
}

// closedURL is a loopback URL where nothing listens.
func closedURL(t *testing.T) string {
	p, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "http://127.0.0.1:" + strconv.Itoa(p)
}

func TestNextURLOnlyWhenNothingWasSent(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	c := newClient(t, tenure.Options{URLs: []string{closedURL(t), srv.URL}})
	l, err := c.Acquire(ctx, "urls/a", tenure.AcquireOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatalf("a refused connection must move on to the next URL: %v", err)
	}
	l.Release(ctx)
	none := newClient(t, tenure.Options{URLs: []string{closedURL(t)}})
	if _, err := none.Acquire(ctx, "urls/b", tenure.AcquireOptions{TTL: time.Second}); !errors.Is(err, tenure.ErrConnect) || !errors.Is(err, tenure.ErrTransport) {
		t.Fatalf("no server: %v", err)
	}

	// A frozen server accepts the connection (the kernel does) and never
	// answers: the request was sent, so it times out and is not retried
	// on the live server.
	frozen := testserver.Start(t)
	if err := frozen.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer frozen.Signal(syscall.SIGCONT)
	c2 := newClient(t, tenure.Options{URLs: []string{frozen.URL, srv.URL}, RequestTimeout: 2 * time.Second})
	_, err = c2.Acquire(ctx, "urls/c", tenure.AcquireOptions{TTL: 5 * time.Second})
	if !errors.Is(err, tenure.ErrTimeout) {
		t.Fatalf("a frozen server: %v, want ErrTimeout", err)
	}
	if _, err := c.Get(ctx, "urls/c"); !errors.Is(err, tenure.ErrNotFound) {
		t.Fatalf("the timed-out acquire was retried on the next URL: %v", err)
	}
}

// lostReplyRelay passes each request on to target and throws the answer
// away, so whatever the request did is done, then answers 503: a grant
// committed whose answer the client never saw, as the PostgreSQL store
// answers when its connection broke after the commit was sent.
func lostReplyRelay(t *testing.T, target string) string {
	t.Helper()
	relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, err := http.NewRequest(r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":"unavailable","message":"the relay lost the answer"}`)
	}))
	t.Cleanup(relay.Close)
	return relay.URL
}

// A 503 does not prove that nothing was done, and the client sends an
// acquire again to the next server after one: with the request_id every
// acquire carries (drawn when not given) the next server answers that
// very grant, where it would answer 409 held by this owner.
func TestAnAcquireAnswered503AfterItsCommitGetsThatGrant(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	c := newClient(t, tenure.Options{URLs: []string{lostReplyRelay(t, srv.URL), srv.URL}})
	l, err := c.Acquire(ctx, "r503/a", tenure.AcquireOptions{TTL: 30 * time.Second})
	if err != nil {
		t.Fatalf("an acquire committed but answered 503: %v", err)
	}
	got, err := c.Get(ctx, "r503/a")
	if err != nil || got.Token != l.Token || got.OwnerID != c.OwnerID() {
		t.Fatalf("the live grant %+v (%v) is not the one returned, token %d", got, err, l.Token)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("the grant returned is not the live one: %v", err)
	}
}

func TestBearerAuthentication(t *testing.T) {
	dir := t.TempDir()
	sum := sha256.Sum256([]byte("s3cret-token"))
	auth := filepath.Join(dir, "auth.json")
	err := os.WriteFile(auth, []byte(fmt.Sprintf(`{"principals":[{"name":"w","token_sha256":"%s",`+
		`"allow":[{"prefix":"auth/","actions":["acquire","read"]}]}]}`, hex.EncodeToString(sum[:]))), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, "--auth-file", auth)
	ctx := context.Background()
	anon := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	if _, err := anon.Acquire(ctx, "auth/a", tenure.AcquireOptions{TTL: time.Second}); !errors.Is(err, tenure.ErrUnauthorized) {
		t.Fatalf("without a token: %v", err)
	}
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, Bearer: "s3cret-token"})
	l, err := c.Acquire(ctx, "auth/a", tenure.AcquireOptions{TTL: time.Second})
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	if _, err := c.Acquire(ctx, "other/a", tenure.AcquireOptions{TTL: time.Second}); !errors.Is(err, tenure.ErrForbidden) {
		t.Fatalf("outside the principal's prefix: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	s := anon.Events(ctx, "auth/", tenure.EventOptions{})
	if s.Next() || !errors.Is(s.Err(), tenure.ErrUnauthorized) {
		t.Fatalf("an event stream without a token: %v", s.Err())
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tenured"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	srv := testserver.Start(t, "--tls-cert", certFile, "--tls-key", keyFile)
	url := "https://127.0.0.1:" + strconv.Itoa(srv.Port)
	c := newClient(t, tenure.Options{URLs: []string{url}, TLS: &tls.Config{RootCAs: pool}})
	ctx := context.Background()
	var l *tenure.Lease
	var err error
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if l, err = c.Acquire(ctx, "tls/a", tenure.AcquireOptions{TTL: 5 * time.Second}); !errors.Is(err, tenure.ErrTransport) && !errors.Is(err, tenure.ErrUnavailable) {
			break // the server is up
		}
	}
	if err != nil {
		t.Fatalf("acquire over TLS: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A client that does not trust the certificate sends nothing.
	untrusting := newClient(t, tenure.Options{URLs: []string{url}})
	if _, err := untrusting.Acquire(ctx, "tls/b", tenure.AcquireOptions{TTL: time.Second}); !errors.Is(err, tenure.ErrConnect) {
		t.Fatalf("an untrusted certificate: %v", err)
	}
}
