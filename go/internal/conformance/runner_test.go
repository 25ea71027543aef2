// SPDX-License-Identifier: MIT

// The shared client scenarios of tests/conformance through the Go client:
// every *.json file there, against a real tenured started here.  The C
// client (tn-conformance) and the Python client run the same files.

package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tenure"
	"tenure/internal/testserver"
)

var required = []string{"acquire", "held", "renew", "lost", "release", "check", "wait", "events",
	"session_basic", "session_claim", "session_keepalive"}

func scenarioFiles(t *testing.T) []string {
	dir := filepath.Join(testserver.Src(), "tests", "conformance")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s: %v", dir, err)
	}
	return files
}

// Never pass on an empty or shrunken set: these are the scenarios every
// client must agree on.
func TestEveryRequiredScenarioIsThere(t *testing.T) {
	have := map[string]bool{}
	for _, f := range scenarioFiles(t) {
		have[strings.TrimSuffix(filepath.Base(f), ".json")] = true
	}
	for _, s := range required {
		if !have[s] {
			t.Errorf("scenario %s.json is missing", s)
		}
	}
}

var runs atomic.Int64

func TestScenarios(t *testing.T) {
	srv := testserver.Start(t)
	for _, f := range scenarioFiles(t) {
		f := f
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			prefix := fmt.Sprintf("conf-go-%d-%d/", os.Getpid(), runs.Add(1))
			r, err := newRunner(srv.URL, prefix)
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()
			var skip *skipped
			if err := r.run(f); errors.As(err, &skip) {
				t.Skip(skip.Error())
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
}

type scenario struct {
	Scenario string           `json:"scenario"`
	Needs    []string         `json:"needs"`
	Steps    []map[string]any `json:"steps"`
}

// skipped: the scenario needs what the server has not (sessions).
type skipped struct{ why string }

func (s *skipped) Error() string { return s.why }

type runner struct {
	c        *tenure.Client
	prefix   string
	scenario string
	vars     map[string]any
	leases   map[string]*tenure.Lease
	sessions map[string]*tenure.Session
	ends     map[string]*sessionEnds
	stream   *tenure.EventStream
	mu       sync.Mutex
	got      []map[string]any
	more     chan struct{} // signalled on each event
}

func newRunner(url, prefix string) (*runner, error) {
	c, err := tenure.New(tenure.Options{URLs: []string{url}, OwnerID: "conformance-go"})
	if err != nil {
		return nil, err
	}
	return &runner{c: c, prefix: prefix, vars: map[string]any{},
		leases: map[string]*tenure.Lease{}, sessions: map[string]*tenure.Session{},
		ends: map[string]*sessionEnds{}, more: make(chan struct{}, 1)}, nil
}

func (r *runner) close() {
	if r.stream != nil {
		r.stream.Close()
	}
	r.c.Close()
}

func (r *runner) real(sym string) string { return r.prefix + r.scenario + "/" + sym }

func (r *runner) run(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var sc scenario
	if err := dec.Decode(&sc); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if len(sc.Steps) == 0 {
		return fmt.Errorf("%s: a scenario without steps", path)
	}
	r.scenario = sc.Scenario
	for i, raw := range sc.Steps {
		st := norm(raw).(map[string]any)
		res, err := r.step(st)
		where := fmt.Sprintf("%s step %d (%v)", r.scenario, i, st["do"])
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if len(sc.Needs) > 0 && res != nil && res["error"] == "not_implemented" {
			return &skipped{fmt.Sprintf("%s: the server has no %s", where, strings.Join(sc.Needs, ", "))}
		}
		if exp, ok := st["expect"]; ok {
			if err := r.match(exp, res, where); err != nil {
				return err
			}
		} else if res != nil && res["error"] != nil {
			return fmt.Errorf("%s: failed: %v", where, res)
		}
	}
	return nil
}

// arg is the step's argument key, with "$x" replaced by x's value.
func (r *runner) arg(st map[string]any, key string) any {
	v := st[key]
	if s, ok := v.(string); ok && strings.HasPrefix(s, "$") {
		return r.vars[s[1:]]
	}
	return v
}

func (r *runner) num(st map[string]any, key string) int64 {
	n, _ := r.arg(st, key).(int64)
	return n
}

func (r *runner) msArg(st map[string]any, key string) time.Duration {
	return time.Duration(r.num(st, key)) * time.Millisecond
}

func str(st map[string]any, key string) string {
	s, _ := st[key].(string)
	return s
}

// errResult is the result of a failed step: {"error": code, ...}.
func errResult(err error) (map[string]any, error) {
	var e *tenure.Error
	if !errors.As(err, &e) {
		return nil, err
	}
	out := map[string]any{"error": e.Code}
	if e.Code == "lock_delay" {
		out["retry_after_ms"] = e.RetryAfter.Milliseconds()
	}
	if e.Holder != nil {
		out["holder"] = map[string]any{"owner_id": e.Holder.OwnerID,
			"token": int64(e.Holder.Token), "expires_in_ms": e.Holder.ExpiresIn.Milliseconds()}
	}
	return out, nil
}
