// SPDX-License-Identifier: MIT

// Package testserver starts real tenured processes for the Go tests: each
// on a free loopback port with its own data directory, ready once /readyz
// answers 200.  TN_BIN names the build's bin/ folder (default: build/dev/bin
// of the source tree this module sits in).
package testserver

import (
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
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
}

// ports draws the ports to try; seeded per process, so that test
// processes running at once do not try the same ones in the same order.
var ports = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(time.Now().UnixNano() ^ int64(os.Getpid())<<20))}

// FreePort is a loopback port nothing listens on now, below the ephemeral
// range (so no outgoing connection takes it before tenured binds it).
func FreePort() (int, error) {
	for i := 0; i < 200; i++ {
		ports.Lock()
		p := 12000 + ports.Intn(19000)
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
			t.Cleanup(s.Kill)
			return s
		}
		s.Kill()
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

// Restart kills the process and starts it again on the same port and data
// directory.
func (s *Server) Restart() error {
	s.Kill()
	return s.start()
}

// Signal sends sig to the process (SIGSTOP freezes it, SIGCONT resumes).
func (s *Server) Signal(sig syscall.Signal) error { return s.cmd.Process.Signal(sig) }
