// SPDX-License-Identifier: MIT

// Package sink opens the sinks of the fence tests (sqlite:PATH, or a
// postgresql:// URL) through database/sql with Debian's drivers, and makes
// one fenced write: the mark check and the row in one transaction, as a
// worker does.
package sink

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	_ "github.com/lib/pq"           // PostgreSQL driver "postgres"
	_ "github.com/mattn/go-sqlite3" // SQLite driver "sqlite3" (build tag libsqlite3)

	"tenure/fence"
)

// Sink is an open sink and its dialect.
type Sink struct {
	DB       *sql.DB
	Postgres bool
}

// Open opens spec: "sqlite:PATH" or a postgres:// / postgresql:// URL.
func Open(spec string) (*Sink, error) {
	if strings.HasPrefix(spec, "sqlite:") {
		// A write transaction from its BEGIN: SQLite has no row locks.
		path := strings.TrimPrefix(spec, "sqlite:")
		db, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate&_busy_timeout=10000")
		return &Sink{DB: db}, err
	}
	db, err := sql.Open("postgres", PgURL(spec))
	return &Sink{DB: db, Postgres: true}, err
}

// PgURL is u with sslmode=disable unless it names one (lib/pq requires TLS
// by default; the test clusters are on loopback without it).
func PgURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Query().Get("sslmode") != "" {
		return u
	}
	q := p.Query()
	q.Set("sslmode", "disable")
	p.RawQuery = q.Encode()
	return p.String()
}

// Close closes the database handle.
func (s *Sink) Close() error { return s.DB.Close() }

func (s *Sink) ph(n int) string {
	if s.Postgres {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

// CreateData creates the data table the writes go to.
func (s *Sink) CreateData(ctx context.Context) error {
	_, err := s.DB.ExecContext(ctx, "CREATE TABLE data (resource text, token bigint, step int)")
	return err
}

// Admit is the fence's check-and-advance of the sink's dialect, in tx.
func (s *Sink) Admit(ctx context.Context, tx *sql.Tx, resource string, token uint64) (bool, error) {
	if s.Postgres {
		return fence.AdmitPostgres(ctx, tx, resource, token)
	}
	return fence.AdmitSQLite(ctx, tx, resource, token)
}

// Write makes one write of (resource, token, step): with fenced, the row is
// inserted only if the fence admits the token, in the same transaction;
// without, it is inserted unchecked (the control of the tests).  It
// returns whether the row was written.
func (s *Sink) Write(ctx context.Context, resource string, token uint64, step int, fenced bool) (bool, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() // after Commit it does nothing
	ok := true
	if fenced {
		if ok, err = s.Admit(ctx, tx, resource, token); err != nil {
			return false, err
		}
	}
	if ok {
		_, err = tx.ExecContext(ctx, "INSERT INTO data VALUES ("+s.ph(1)+", "+s.ph(2)+", "+s.ph(3)+")",
			resource, int64(token), step)
		if err != nil {
			return false, err
		}
	}
	return ok, tx.Commit()
}

// Row is one written row.
type Row struct {
	Resource string
	Token    uint64
	Step     int
}

// Rows are the data rows in token, step order.
func (s *Sink) Rows(ctx context.Context) ([]Row, error) {
	rs, err := s.DB.QueryContext(ctx, "SELECT resource, token, step FROM data ORDER BY token, step")
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []Row
	for rs.Next() {
		var r Row
		if err := rs.Scan(&r.Resource, &r.Token, &r.Step); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// Mark reads the fence's mark of resource.
func (s *Sink) Mark(ctx context.Context, resource string) (uint64, error) {
	if s.Postgres {
		return fence.MarkPostgres(ctx, s.DB, resource)
	}
	return fence.MarkSQLite(ctx, s.DB, resource)
}
