// SPDX-License-Identifier: MIT

// What the fence tests share: fresh sinks (a SQLite file, a PostgreSQL
// database of its own on TENURE_TEST_PG_URL), and the C fence kit driven
// through tn-conformance --fence, so the Go and C kits meet on one table.

package fencetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"tenure/fencetest/sink"
	"tenure/internal/testserver"
)

var dbs atomic.Int64

// newSink makes a fresh sink of kind "sqlite" or "postgres" with its data
// table and returns its spec.  PostgreSQL runs where TENURE_TEST_PG_URL is
// set (scripts/with-pg.sh); without it the case skips, and it fails when
// the URL is set but the server cannot be reached.
func newSink(t *testing.T, kind string) (string, *sink.Sink) {
	t.Helper()
	spec := "sqlite:" + filepath.Join(t.TempDir(), "sink.db")
	if kind == "postgres" {
		spec = newPgDatabase(t)
	}
	s, err := sink.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.CreateData(context.Background()); err != nil {
		t.Fatalf("create data table in %s: %v", spec, err)
	}
	return spec, s
}

func newPgDatabase(t *testing.T) string {
	base := os.Getenv("TENURE_TEST_PG_URL")
	if base == "" {
		t.Skip("TENURE_TEST_PG_URL is not set (run under scripts/with-pg.sh)")
	}
	admin, err := sql.Open("postgres", sink.PgURL(base))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("tn_go_%d_%d", os.Getpid(), dbs.Add(1))
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("TENURE_TEST_PG_URL is set but: %v", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// cKit is one check-and-advance of the C fence kit on spec, in its own
// transaction: "admitted" or "stale".
func cKit(t *testing.T, spec, resource string, token uint64) string {
	t.Helper()
	exe := filepath.Join(testserver.Bin(), "tn-conformance")
	out, err := exec.Command(exe, "--fence", spec, resource, fmt.Sprint(token)).Output()
	got := strings.TrimSpace(string(out))
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	if !(code == 0 && got == "admitted") && !(code == 3 && got == "stale") {
		t.Fatalf("%s --fence %s %d: exit %d, %q", exe, resource, token, code, got)
	}
	return got
}

var sinkKinds = []string{"sqlite", "postgres"}
