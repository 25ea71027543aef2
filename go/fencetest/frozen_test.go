// SPDX-License-Identifier: MIT

// The incident with a Go worker (cmd/tenure-go-worker): it holds a lease
// through Hold, is frozen (SIGSTOP) between its Held() check and its
// write, stays frozen past its TTL while the lease goes to a successor that
// writes through the fence, and is resumed (SIGCONT).  Its stale write is
// refused by the Go fence, in SQLite and in PostgreSQL, as the C kit
// refuses it; it learns the loss, and Hold returns ErrLost/ErrExpired
// without releasing the successor's grant.  The control runs the same
// worker without the fence and sees the zombie's write land: the scenario
// really makes one.

package fencetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tenure"
	"tenure/fencetest/sink"
	"tenure/internal/testserver"
)

// TTL of the worker's lease, and how long it stays frozen: past the whole
// TTL, as the incident needs.  4 s leave a loaded machine time for the
// worker's first write before its safe time (3.6 s) runs out.
const workerTTL = 4 * time.Second
const frozenFor = workerTTL + 500*time.Millisecond

var workerExe string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tenure-go-worker")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	workerExe = filepath.Join(dir, "tenure-go-worker")
	build := exec.Command("go", "build", "-tags", "libsqlite3", "-o", workerExe, "./cmd/tenure-go-worker")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tenure-go-worker:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// worker is a running tenure-go-worker and the JSON lines it printed.
type worker struct {
	cmd   *exec.Cmd
	lines chan map[string]any
	got   []map[string]any
}

func startWorker(t *testing.T, args ...string) *worker {
	w := &worker{cmd: exec.Command(workerExe, args...), lines: make(chan map[string]any, 64)}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w.cmd.Stderr = os.Stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		_ = w.cmd.Process.Kill()
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				w.lines <- ev
			}
		}
		close(w.lines)
	}()
	return w
}

// until reads lines until one has key.
func (w *worker) until(t *testing.T, key string) map[string]any {
	t.Helper()
	for ev := range w.lines {
		w.got = append(w.got, ev)
		if _, ok := ev[key]; ok {
			return ev
		}
	}
	t.Fatalf("worker ended before %q: %v", key, w.got)
	return nil
}

// rest reads every line left and waits for the exit code.
func (w *worker) rest(t *testing.T) int {
	for ev := range w.lines {
		w.got = append(w.got, ev)
	}
	err := w.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func stopped(t *testing.T, pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return f[0] == "T" || f[0] == "t"
}

// freezeAndTakeOver runs the incident up to the resumption: the worker
// wrote once, froze in the gap, and the successor holds the lease and
// wrote (through the fence) while it was frozen.  It returns the worker's
// token and the successor's lease.
func freezeAndTakeOver(t *testing.T, w *worker, c *tenure.Client, s *sink.Sink, name string) (uint64, *tenure.Lease) {
	t1 := uint64(w.until(t, "token")["token"].(float64))
	w.until(t, "stopping")
	for end := time.Now().Add(10 * time.Second); !stopped(t, w.cmd.Process.Pid); {
		if time.Now().After(end) {
			t.Fatal("the worker did not stop")
		}
		time.Sleep(10 * time.Millisecond)
	}
	frozenAt := time.Now()
	ctx := context.Background()
	if err := c.ForceRelease(ctx, name); err != nil {
		t.Fatal(err)
	}
	succ, err := c.Acquire(ctx, name, tenure.AcquireOptions{Owner: "successor", TTL: 10 * time.Second})
	if err != nil || succ.Token <= t1 {
		t.Fatalf("successor: %v, %v (worker's token %d)", succ, err, t1)
	}
	if ok, err := s.Write(ctx, name, succ.Token, 100, true); !ok || err != nil {
		t.Fatalf("the successor's fenced write: %v, %v", ok, err)
	}
	time.Sleep(time.Until(frozenAt.Add(frozenFor)))
	if err := w.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	return t1, succ
}

// after is the line that follows the first one with key.
func (w *worker) after(key string) map[string]any {
	for i, ev := range w.got {
		if _, ok := ev[key]; ok && i+1 < len(w.got) {
			return w.got[i+1]
		}
	}
	return nil
}

func TestFrozenHolderIsFenced(t *testing.T) {
	srv := testserver.Start(t)
	for _, kind := range sinkKinds {
		t.Run(kind, func(t *testing.T) {
			spec, s := newSink(t, kind)
			c, err := tenure.New(tenure.Options{URLs: []string{srv.URL}})
			if err != nil {
				t.Fatal(err)
			}
			name := "go-frozen/" + kind
			w := startWorker(t, "-ttl", workerTTL.String(), srv.URL, name, spec)
			t1, succ := freezeAndTakeOver(t, w, c, s, name)
			code := w.rest(t)
			checkFenced(t, w, code, t1)
			ctx := context.Background()
			rows, err := s.Rows(ctx)
			want := []sink.Row{{Resource: name, Token: t1, Step: 0}, {Resource: name, Token: succ.Token, Step: 100}}
			if err != nil || fmt.Sprint(rows) != fmt.Sprint(want) {
				t.Fatalf("sink rows %v (%v), want the worker's first write and the successor's: %v", rows, err, want)
			}
			if m, err := s.Mark(ctx, name); err != nil || m != succ.Token {
				t.Fatalf("mark %d (%v), want the successor's token %d", m, err, succ.Token)
			}
			// Hold did not release the successor's grant on its way out.
			if cr, err := c.Check(ctx, name, succ.Token); err != nil || !cr.Current {
				t.Fatalf("the successor's grant is no longer current: %+v, %v", cr, err)
			}
			// The C kit decides the same on the same table.
			if cKit(t, spec, name, t1) != "stale" || cKit(t, spec, name, succ.Token) != "admitted" {
				t.Fatal("the C kit disagrees with the Go fence")
			}
			if err := succ.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func checkFenced(t *testing.T, w *worker, code int, t1 uint64) {
	t.Helper()
	// The write from the gap was refused by the sink, not by luck.
	if ev := w.after("stopping"); ev == nil || ev["step"] != 1.0 || ev["admitted"] != false {
		t.Fatalf("the zombie's write after the gap was not refused: %v (all: %v)", ev, w.got)
	}
	var learned map[string]any
	for _, ev := range w.got {
		if _, ok := ev["learned"]; ok && learned == nil {
			learned = ev
		}
	}
	if learned == nil || learned["safe"] != 0.0 || (learned["learned"] != "Lost" && learned["learned"] != "Expired") {
		t.Fatalf("the worker did not learn the loss with safe time 0: %v", w.got)
	}
	raised := w.got[len(w.got)-1]["hold_raised"]
	if code != 4 || (raised != "Lost" && raised != "Expired") {
		t.Fatalf("Hold did not end in a loss (exit %d): %v", code, w.got)
	}
}

// The control: the same incident without the fence lets the zombie's
// write land after the successor's.  It proves the scenario makes the
// stale write that the fenced run must refuse.
func TestFrozenHolderWithoutFenceWrites(t *testing.T) {
	srv := testserver.Start(t)
	spec, s := newSink(t, "sqlite")
	c, err := tenure.New(tenure.Options{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	name := "go-frozen/control"
	w := startWorker(t, "-no-fence", "-ttl", workerTTL.String(), srv.URL, name, spec)
	t1, succ := freezeAndTakeOver(t, w, c, s, name)
	if code := w.rest(t); code != 4 {
		t.Fatalf("exit %d: %v", code, w.got)
	}
	if ev := w.after("stopping"); ev == nil || ev["step"] != 1.0 || ev["admitted"] != true {
		t.Fatalf("without the fence the zombie's write should land: %v", w.got)
	}
	rows, _ := s.Rows(context.Background())
	if len(rows) != 3 || rows[0].Token != t1 || rows[0].Step != 0 || rows[1].Token != t1 || rows[1].Step != 1 || rows[2].Token != succ.Token {
		t.Fatalf("rows %v: want the zombie's write of step 1 beside the successor's", rows)
	}
}
