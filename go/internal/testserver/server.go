// SPDX-License-Identifier: MIT

// Package testserver starts real tenured processes for the Go tests, by
// the rules of the shell and Python launchers
// (tests/integration/lib-tenured.sh, tests/tools/tenured.py): each on a
// free loopback port below the kernel's range for outgoing connections,
// with its own data directory, ready once its own log says it listens on
// that port and /readyz answers 200 (an answer from another process that
// holds the port is never taken for ours).  A sanitizer report in its log
// fails the test.  TN_BIN names the build's bin/ folder (default:
// build/dev/bin of the source tree this module sits in).
package testserver

import (
	"bytes"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Src is the root of the source tree (TN_SRC, else two folders above this
// package's module).
func Src() string {
	if s := os.Getenv("TN_SRC"); s != "" {
		return s
	}
	_, file, _, _ := runtime.Caller(0)
	// file is SRC/go/internal/testserver/server.go
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Bin is the folder of the built binaries (TN_BIN, else SRC/build/dev/bin).
func Bin() string {
	if b := os.Getenv("TN_BIN"); b != "" {
		return b
	}
	return filepath.Join(Src(), "build", "dev", "bin")
}

// Server is one tenured process.
type Server struct {
	URL    string
	Port   int
	Dir    string // its data directory
	Args   []string
	cmd    *exec.Cmd
	exited chan struct{}
	log    string
	since  int64 // the log's size before this run: only its lines count
}

// ports draws the ports to try; seeded per process, so that test
// processes running at once do not try the same ones in the same order.
var ports = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(time.Now().UnixNano() ^ int64(os.Getpid())<<20))}

// ephemeralLow is where the kernel's range for outgoing ports starts.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if lo, err := strconv.Atoi(f[0]); err == nil && lo > 12000 {
				return lo
			}
		}
	}
	return 32768
}

// FreePort is a loopback port nothing listens on now, below the ephemeral
// range (so no outgoing connection takes it before tenured binds it).
func FreePort() (int, error) {
	lo := ephemeralLow()
	for i := 0; i < 200; i++ {
		ports.Lock()
		p := 10000 + ports.Intn(lo-10000)
		ports.Unlock()
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			l.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port")
}

// Start starts tenured with extra arguments and waits until it is ready;
// the process is killed when t ends.  A port taken between the check and
// tenured's bind (another test process) is replaced by another.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	s := &Server{Dir: t.TempDir(), Args: args}
	s.log = filepath.Join(s.Dir, "tenured.log")
	var err error
	for try := 0; try < 3; try++ {
		if s.Port, err = FreePort(); err != nil {
			break
		}
		s.URL = "http://127.0.0.1:" + strconv.Itoa(s.Port)
		if err = s.start(); err == nil {
			t.Cleanup(func() {
				s.Kill()
				if r := s.SanitizerReports(); r != "" {
					t.Errorf("sanitizer report from tenured:\n%s", r)
				}
			})
			return s
		}
		s.Kill()
		if !strings.Contains(s.thisRun(), "cannot listen on") {
			break // not a port taken meanwhile: another port will not help
		}
	}
	t.Fatal(err)
	return nil
}

func (s *Server) start() error {
	exe := filepath.Join(Bin(), "tenured")
	if _, err := os.Stat(exe); err != nil {
		return fmt.Errorf("missing %s (build first, or set TN_BIN): %v", exe, err)
	}
	log, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if st, err := log.Stat(); err == nil {
		s.since = st.Size()
	}
	defer log.Close()
	args := append([]string{"--listen", "127.0.0.1:" + strconv.Itoa(s.Port),
		"--data-dir", filepath.Join(s.Dir, "data")}, s.Args...)
	s.cmd = exec.Command(exe, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	s.exited = exited
	go func() { _ = s.cmd.Wait(); close(exited) }()
	if s.isTLS() {
		return nil // the caller waits with its own TLS configuration
	}
	return s.waitReady(exited)
}

func (s *Server) waitReady(exited <-chan struct{}) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		select {
		case <-exited:
			b, _ := os.ReadFile(s.log)
			return fmt.Errorf("tenured exited: %s", b)
		default:
		}
		if !s.bound() {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		r, err := hc.Get("http://127.0.0.1:" + strconv.Itoa(s.Port) + "/readyz")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("tenured on port %d did not become ready", s.Port)
}

// thisRun is what the process started last wrote to the log.
func (s *Server) thisRun() string {
	b, err := os.ReadFile(s.log)
	if err != nil || int64(len(b)) < s.since {
		return ""
	}
	return string(b[s.since:])
}

// bound: this run's log says it listens on the port (unless a --log-level
// above info hides the line: then the 200 has to do).
func (s *Server) bound() bool {
	for i, a := range s.Args {
		if (a == "--log-level" && i+1 < len(s.Args) && (s.Args[i+1] == "warn" || s.Args[i+1] == "error")) ||
			a == "--log-level=warn" || a == "--log-level=error" {
			return true
		}
	}
	return strings.Contains(s.thisRun(), "port="+strconv.Itoa(s.Port)+" ")
}

var sanitizerReport = regexp.MustCompile(`ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:`)

// SanitizerReports is the lines of a sanitizer build's reports in the
// log ("" when there are none).
func (s *Server) SanitizerReports() string {
	b, _ := os.ReadFile(s.log)
	var out []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if sanitizerReport.Match(l) {
			out = append(out, string(l))
		}
	}
	return strings.Join(out, "\n")
}

// Log is the whole log of the server, every run.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

func (s *Server) isTLS() bool {
	for _, a := range s.Args {
		if a == "--tls-cert" {
			return true
		}
	}
	return false
}

// Kill stops the process with SIGKILL (after a SIGCONT, in case a test
// stopped it).
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Stop sends sig (after a SIGCONT, in case a test stopped it) and waits;
// the exit status (-1 when a signal ended it).
func (s *Server) Stop(sig syscall.Signal) int {
	if s.cmd == nil || s.cmd.Process == nil {
		return -1
	}
	_ = s.cmd.Process.Signal(sig)
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	<-s.exited
	return s.cmd.ProcessState.ExitCode()
}

// Restart kills the process and starts it again on the same port and data
// directory.
func (s *Server) Restart() error {
	s.Kill()
	return s.start()
}

// Signal sends sig to the process (SIGSTOP freezes it, SIGCONT resumes).
func (s *Server) Signal(sig syscall.Signal) error { return s.cmd.Process.Signal(sig) }
