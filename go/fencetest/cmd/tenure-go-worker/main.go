// SPDX-License-Identifier: MIT

// tenure-go-worker: a worker that holds a lease through Client.Hold and
// writes fenced rows into a sink, one JSON line per event on stdout.
// After its first write it stops itself (SIGSTOP) between its Held()
// check and its next write: the gap no lease can close.  Run by the
// frozen-holder test, which takes the lease over meanwhile and resumes it.
//
// Usage: tenure-go-worker [-no-fence] [-ttl DURATION] URL NAME SINK
// (SINK: sqlite:PATH or a postgresql:// URL).  -no-fence writes without
// the fence: the test's control, which shows the zombie's write landing.
// Exit 4 when the lease was lost, 1 on errors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"tenure"
	"tenure/fencetest/sink"
)

func say(kv map[string]any) {
	b, _ := json.Marshal(kv)
	fmt.Println(string(b))
}

func kindOf(err error) string {
	if errors.Is(err, tenure.ErrExpired) {
		return "Expired"
	}
	if errors.Is(err, tenure.ErrLost) {
		return "Lost"
	}
	return fmt.Sprint(err)
}

// freeze stops the whole process (SIGSTOP) before this goroutine runs on.
// The signal is sent to this very thread: one sent to the process goes to
// its main thread, which stops the others only once it runs, and meanwhile
// this thread could have made the next write.
func freeze() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}

// work writes until the lease is no longer held.
func work(ctx context.Context, l *tenure.Lease, s *sink.Sink, fenced bool) error {
	say(map[string]any{"token": l.Token})
	for step := 0; ; step++ {
		if !l.Held() { // right before each write
			say(map[string]any{"learned": kindOf(l.Err()), "safe": l.SafeFor().Milliseconds()})
			return nil
		}
		if step == 1 {
			say(map[string]any{"stopping": true})
			freeze()
		}
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		admitted, err := s.Write(wctx, l.Name, l.Token, step, fenced)
		cancel()
		if err != nil {
			return err
		}
		say(map[string]any{"step": step, "admitted": admitted, "safe": l.SafeFor().Milliseconds()})
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func main() {
	noFence := flag.Bool("no-fence", false, "write without the fence (the control)")
	ttl := flag.Duration("ttl", 2*time.Second, "the lease's TTL")
	flag.Parse()
	if flag.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: tenure-go-worker [-no-fence] [-ttl DURATION] URL NAME SINK")
		os.Exit(2)
	}
	url, name, spec := flag.Arg(0), flag.Arg(1), flag.Arg(2)
	s, err := sink.Open(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenure-go-worker:", err)
		os.Exit(1)
	}
	defer s.Close()
	c, err := tenure.New(tenure.Options{URLs: []string{url}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenure-go-worker:", err)
		os.Exit(1)
	}
	err = c.Hold(context.Background(), name, tenure.AcquireOptions{Owner: "zombie", TTL: *ttl},
		func(ctx context.Context, l *tenure.Lease) error { return work(ctx, l, s, !*noFence) })
	if errors.Is(err, tenure.ErrLost) {
		say(map[string]any{"hold_raised": kindOf(err)})
		os.Exit(4)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenure-go-worker:", err)
		os.Exit(1)
	}
	say(map[string]any{"hold_returned": true})
}
