// SPDX-License-Identifier: MIT

// keepbench URL MODE N TTL_MS SECONDS TENURED_PID: one Go Client keeps N
// leases for SECONDS and counts the ones it lost (bench/keepalive-py-go.sh).
// MODE "leases": N Hold calls at once, each renewing its own lease every
// TTL/3.  MODE "session": one session with N names claimed under it.
// Prints one JSON line: lost, alive (the same grant live on the server at
// the end), tenured's and its own CPU (percent of one core), renews/s.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"tenure"
)

const hz = 100 // USER_HZ on Linux

func ticks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

func ownCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type bench struct {
	c      *tenure.Client
	prefix string
	n      int
	ttl    time.Duration
	lost   atomic.Int64
	renews atomic.Int64
	tokens sync.Map // name -> token
}

// leases starts n Hold calls (16 acquiring at once) that keep their lease
// until stop is closed; wg counts them.
func (b *bench) leases(stop chan struct{}, wg *sync.WaitGroup) {
	gate := make(chan struct{}, 16)
	started := make(chan struct{}, b.n)
	for i := 0; i < b.n; i++ {
		name := fmt.Sprintf("%s%06d", b.prefix, i)
		wg.Add(1)
		gate <- struct{}{}
		go func() {
			defer wg.Done()
			err := b.c.Hold(context.Background(), name, tenure.AcquireOptions{TTL: b.ttl},
				func(ctx context.Context, l *tenure.Lease) error {
					b.tokens.Store(l.Name, l.Token)
					<-gate
					started <- struct{}{}
					select {
					case <-stop:
					case <-ctx.Done():
					}
					return nil
				})
			if err != nil {
				b.lost.Add(1)
				fmt.Fprintf(os.Stderr, "keepbench: %s: %v\n", name, err)
			}
		}()
	}
	for i := 0; i < b.n; i++ {
		<-started
	}
}

func (b *bench) session() (*tenure.Session, error) {
	s, err := b.c.OpenSession(context.Background(), tenure.SessionOptions{TTL: b.ttl,
		OnLeaseEnd: func(*tenure.Lease, error) { b.lost.Add(1) }})
	if err != nil {
		return nil, err
	}
	names := make([]string, b.n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%06d", b.prefix, i)
	}
	res, err := s.Claim(context.Background(), names, tenure.ClaimOptions{})
	if err != nil {
		return nil, err
	}
	if len(res.Granted) != b.n {
		return nil, fmt.Errorf("claimed %d of %d", len(res.Granted), b.n)
	}
	for _, l := range res.Granted {
		b.tokens.Store(l.Name, l.Token)
	}
	return s, nil
}

func (b *bench) alive() int {
	n := 0
	after := ""
	for {
		items, next, err := b.c.List(context.Background(), tenure.ListOptions{Prefix: b.prefix, After: after, Limit: 1000})
		if err != nil {
			fmt.Fprintln(os.Stderr, "keepbench: list:", err)
			return n
		}
		for _, it := range items {
			if t, ok := b.tokens.Load(it.Name); ok && t.(uint64) == it.Token {
				n++
			}
		}
		if next == "" {
			return n
		}
		after = next
	}
}

func main() {
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: keepbench URL leases|session N TTL_MS SECONDS TENURED_PID")
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Args[3])
	ttlMs, _ := strconv.Atoi(os.Args[4])
	secs, _ := strconv.ParseFloat(os.Args[5], 64)
	pid, _ := strconv.Atoi(os.Args[6])
	b := &bench{n: n, ttl: time.Duration(ttlMs) * time.Millisecond,
		prefix: fmt.Sprintf("bench-ka-go-%d/", os.Getpid())}
	conns, _ := strconv.Atoi(os.Getenv("TN_KEEPALIVE_CONNS"))
	c, err := tenure.New(tenure.Options{URLs: []string{os.Args[1]}, KeepaliveConns: conns, Log: func(m string) {
		if strings.HasPrefix(m, "renewed") {
			b.renews.Add(1)
		}
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "keepbench:", err)
		os.Exit(1)
	}
	b.c = c
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t0 := time.Now()
	var s *tenure.Session
	if os.Args[2] == "session" {
		if s, err = b.session(); err != nil {
			fmt.Fprintln(os.Stderr, "keepbench:", err)
			os.Exit(1)
		}
	} else {
		b.leases(stop, &wg)
	}
	setup := time.Since(t0)
	b.renews.Store(0)
	k0, c0, w0 := ticks(pid), ownCPU(), time.Now()
	time.Sleep(time.Duration(secs * float64(time.Second)))
	k1, c1, wall := ticks(pid), ownCPU(), time.Since(w0).Seconds()
	lost := b.lost.Load()
	alive := b.alive()
	out := map[string]any{"client": "go", "mode": os.Args[2], "kept": n, "ttl_ms": ttlMs,
		"seconds": secs, "lost": lost, "alive": alive,
		"setup_s":         float64(setup.Milliseconds()) / 1000,
		"renews_per_s":    float64(b.renews.Load()) / wall,
		"tenured_cpu_pct": 100 * float64(k1-k0) / hz / wall,
		"client_cpu_pct":  100 * (c1 - c0).Seconds() / wall}
	close(stop)
	wg.Wait()
	if s != nil {
		_ = s.End(context.Background())
	}
	js, _ := json.Marshal(out)
	fmt.Println(string(js))
	if lost != 0 || alive != n {
		os.Exit(1)
	}
}
