// SPDX-License-Identifier: MIT

// The keepalive's connections: many kept leases renew pipelined over the
// few kept-alive connections the client asks for (not one connection per
// renew), and a kept-alive connection tenured closed while idle is
// replaced without a failed renew.  How many leases one client keeps at
// what cost is a bench (bench/keepalive-py-go.sh go), not a test.

package tenure_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tenure"
	"tenure/internal/testserver"
)

// metrics reads one counter of the server; reads counts the connections
// the reads themselves opened.
type metrics struct {
	url   string
	reads int
}

func (m *metrics) get(t *testing.T, name string) float64 {
	t.Helper()
	m.reads++
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	r, err := hc.Get(m.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	got := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` ([0-9.e+]+)$`).FindSubmatch(b)
	if got == nil {
		t.Fatalf("no metric %s", name)
	}
	v, _ := strconv.ParseFloat(string(got[1]), 64)
	return v
}

type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(m string) {
	l.mu.Lock()
	l.lines = append(l.lines, m)
	l.mu.Unlock()
}

func (l *logLines) count(prefix string) (n int, failed []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.lines {
		if strings.HasPrefix(m, prefix) {
			n++
		}
		if strings.Contains(m, "failed") {
			failed = append(failed, m)
		}
	}
	return n, failed
}

// 200 leases at TTL 1.5 s renew every 500 ms: three rounds of renews (600
// or more) must come over the client's two connections, where one
// connection per renew would have opened 600.
func TestManyLeasesRenewOverFewConnections(t *testing.T) {
	srv := testserver.Start(t)
	var log logLines
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, KeepaliveConns: 2, Log: log.add})
	m := &metrics{url: srv.URL}
	stop := make(chan struct{})
	var started, failed atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := c.Hold(context.Background(), fmt.Sprintf("ka/%d", i), tenure.AcquireOptions{TTL: 1500 * time.Millisecond},
				func(ctx context.Context, l *tenure.Lease) error {
					started.Add(1)
					select {
					case <-stop:
					case <-ctx.Done():
					}
					return nil
				})
			if err != nil {
				failed.Add(1)
				t.Errorf("hold %d: %v", i, err)
			}
		}(i)
	}
	for started.Load() < 200 && failed.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	renews0 := m.get(t, "tenure_renews_total")
	conns0 := m.get(t, "tenure_http_connections_accepted_total")
	reads0 := m.reads
	for end := time.Now().Add(60 * time.Second); m.get(t, "tenure_renews_total")-renews0 < 600; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("three rounds of renews did not come")
		}
	}
	opened := m.get(t, "tenure_http_connections_accepted_total") - conns0 - float64(m.reads-reads0)
	// Failures are counted before the holds end: a renew in flight when
	// its hold returns is cancelled, which is no failure of the keepalive.
	// The two connections may already be open when the window starts (on
	// a loaded machine renews begin before the last hold has started), so
	// none opened within it is fine; one per renew would have opened 600.
	_, f := log.count("")
	close(stop)
	wg.Wait()
	if opened > 2 || len(f) > 0 {
		t.Fatalf("renews opened %v connections (at most 2), failures: %v", opened, f)
	}
}

// tenured closes keep-alive connections idle for 300 ms; renews come every
// 700 ms, each on a connection the server has closed: the renew goes out
// again on a new one, and none fails.
func TestAConnectionClosedWhileIdleIsReplaced(t *testing.T) {
	srv := testserver.Start(t, "--request-timeout-ms", "300")
	var log logLines
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, KeepaliveConns: 1, Log: log.add})
	err := c.Hold(context.Background(), "ka/idle", tenure.AcquireOptions{TTL: 2100 * time.Millisecond},
		func(ctx context.Context, l *tenure.Lease) error {
			for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if n, _ := log.count("renewed"); n >= 4 {
					return nil
				}
				if time.Now().After(end) || ctx.Err() != nil {
					return fmt.Errorf("four renews did not come: %v", ctx.Err())
				}
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	m := &metrics{url: srv.URL}
	if _, f := log.count(""); len(f) > 0 || m.get(t, "tenure_http_idle_timeouts_total") < 2 {
		t.Fatalf("failures %v, idle timeouts %v", f, m.get(t, "tenure_http_idle_timeouts_total"))
	}
}
