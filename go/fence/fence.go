// SPDX-License-Identifier: MIT

// Package fence admits a write at a database/sql sink only if its fencing
// token is at least the highest token the sink has seen for the resource
// (the mark), and raises the mark in the same transaction as the write.
// Equal tokens are admitted (the same holder's writes), lower ones are
// rejected, and the mark never moves down.
//
// It uses the C fence kit's table, SQL function and statements, literally
// (src/fence/sqlite.c, src/fence/pg.c; docs/FENCING.md), so Go, C and
// Python writers can share one sink, in any order:
//
//   - SQLite: tenure_fence(resource TEXT PRIMARY KEY NOT NULL, hwm INTEGER
//     NOT NULL CHECK (hwm >= 0)), created if missing, and one conditional
//     upsert.
//   - PostgreSQL: tenure_fence(resource text PRIMARY KEY, hwm bigint NOT
//     NULL CHECK (hwm >= 0)) and the SQL function
//     tenure_fence_advance(resource text, token bigint) returns boolean,
//     created if missing under the kit's advisory lock.
//
// Every check takes a *sql.Tx: a check that commits separately from its
// write fences nothing.  Commit the write together with the decision, or
// roll both back.  Only the standard library is imported: bring the
// database/sql driver of your choice.
package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Limits shared with the C kit (TN_FENCE_TOKEN_MAX, TN_FENCE_NAME_MAX).
const (
	TokenMax = 1 << 53 // tokens travel as JSON integers
	NameMax  = 256     // bytes of a resource (lease) name
)

// ErrStale is returned by the Require functions when the token is below
// the resource's mark.
var ErrStale = errors.New("fence: token below the mark (stale)")

// ErrInvalid is returned for an empty or too long resource, a resource
// with a NUL byte, or a token above TokenMax; nothing is sent.
var ErrInvalid = errors.New("fence: invalid resource or token")

// PgLockKey is the advisory lock under which the kit's PostgreSQL schema
// is created, so any number of processes, in any language, may create it
// at once.
const PgLockKey = 7300406

// The statements of the C kit (src/fence/sqlite.c), byte for byte.
const (
	SQLiteCreate = "CREATE TABLE IF NOT EXISTS tenure_fence (" +
		" resource TEXT PRIMARY KEY NOT NULL," +
		" hwm INTEGER NOT NULL CHECK (hwm >= 0))"
	SQLiteUpsert = "INSERT INTO tenure_fence(resource, hwm) VALUES (?1, ?2)" +
		" ON CONFLICT(resource) DO UPDATE SET hwm = excluded.hwm" +
		" WHERE tenure_fence.hwm <= excluded.hwm"
	SQLiteGet = "SELECT hwm FROM tenure_fence WHERE resource=?1"
)

// The statements of the C kit (src/fence/pg.c), byte for byte.
const (
	PgCreateTable = "CREATE TABLE IF NOT EXISTS tenure_fence (" +
		" resource text PRIMARY KEY," +
		" hwm bigint NOT NULL CHECK (hwm >= 0));"
	PgCreateFunction = "CREATE OR REPLACE FUNCTION tenure_fence_advance(resource text," +
		" token bigint) RETURNS boolean LANGUAGE sql VOLATILE AS $f$" +
		" WITH up AS (" +
		"  INSERT INTO tenure_fence AS f (resource, hwm) VALUES ($1, $2)" +
		"  ON CONFLICT (resource) DO UPDATE SET hwm = EXCLUDED.hwm" +
		"  WHERE f.hwm <= EXCLUDED.hwm RETURNING 1)" +
		" SELECT EXISTS (SELECT 1 FROM up) $f$;"
	PgAdvance = "SELECT tenure_fence_advance($1, $2::bigint)"
	PgGet     = "SELECT hwm FROM tenure_fence WHERE resource=$1"
	// PgPresent: is the schema there already (then no lock is taken)?
	PgPresent = "SELECT to_regclass('tenure_fence') IS NOT NULL" +
		" AND to_regprocedure('tenure_fence_advance(text,bigint)') IS NOT NULL"
)

func args(resource string, token uint64) error {
	if len(resource) == 0 || len(resource) > NameMax || strings.IndexByte(resource, 0) >= 0 {
		return fmt.Errorf("%w: resource must be 1 to %d bytes without NUL", ErrInvalid, NameMax)
	}
	if token > TokenMax {
		return fmt.Errorf("%w: token %d is above 2^53", ErrInvalid, token)
	}
	return nil
}

// Querier is what reads a mark: a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ---- SQLite ----

// MigrateSQLite creates the mark table if missing (tn_fence_sqlite_migrate).
func MigrateSQLite(ctx context.Context, db interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}) error {
	if _, err := db.ExecContext(ctx, SQLiteCreate); err != nil {
		return fmt.Errorf("fence: create tenure_fence failed: %w", err)
	}
	return nil
}

// AdmitSQLite decides one write inside tx: true when token is admitted (it
// is >= the mark; the mark is now token), false when it is stale (the mark
// is unchanged).  It creates the table if missing.  SQLite has no row
// locks: the write transaction holds the database, so open tx as a write
// transaction (e.g. "_txlock=immediate" with mattn/go-sqlite3) where
// several processes write.
func AdmitSQLite(ctx context.Context, tx *sql.Tx, resource string, token uint64) (bool, error) {
	if err := args(resource, token); err != nil {
		return false, err
	}
	if err := MigrateSQLite(ctx, tx); err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, SQLiteUpsert, resource, int64(token))
	if err != nil {
		return false, fmt.Errorf("fence: advance failed: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("fence: advance failed: %w", err)
	}
	return n == 1, nil
}

// RequireSQLite is AdmitSQLite returning ErrStale instead of false.
func RequireSQLite(ctx context.Context, tx *sql.Tx, resource string, token uint64) error {
	return require(AdmitSQLite(ctx, tx, resource, token))
}

// MarkSQLite reads the mark of resource (0 when none, or no table yet).
func MarkSQLite(ctx context.Context, q Querier, resource string) (uint64, error) {
	var present int
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master"+
		" WHERE type='table' AND name='tenure_fence'").Scan(&present)
	if err != nil || present == 0 {
		return 0, wrapRead(err)
	}
	return readMark(ctx, q, SQLiteGet, resource)
}

// ---- PostgreSQL ----

// MigratePostgres creates the mark table and tenure_fence_advance if
// missing, inside tx, under the kit's advisory lock (as
// tn_fence_pg_migrate does), so any number of processes may run it at once.
func MigratePostgres(ctx context.Context, tx *sql.Tx) error {
	var present bool
	if err := tx.QueryRowContext(ctx, PgPresent).Scan(&present); err != nil {
		return fmt.Errorf("fence: migration failed: %w", err)
	}
	if present {
		return nil
	}
	for _, q := range []string{"SET LOCAL client_min_messages = warning",
		fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", PgLockKey), PgCreateTable, PgCreateFunction} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("fence: migration failed: %w", err)
		}
	}
	return nil
}

// AdmitPostgres decides one write inside tx: true when token is admitted
// (the mark is now token), false when stale.  It creates the schema if
// missing.  The row lock of the upsert orders concurrent writers of one
// resource until tx ends.
func AdmitPostgres(ctx context.Context, tx *sql.Tx, resource string, token uint64) (bool, error) {
	if err := args(resource, token); err != nil {
		return false, err
	}
	if err := MigratePostgres(ctx, tx); err != nil {
		return false, err
	}
	var ok bool
	if err := tx.QueryRowContext(ctx, PgAdvance, resource, int64(token)).Scan(&ok); err != nil {
		return false, fmt.Errorf("fence: advance failed: %w", err)
	}
	return ok, nil
}

// RequirePostgres is AdmitPostgres returning ErrStale instead of false.
func RequirePostgres(ctx context.Context, tx *sql.Tx, resource string, token uint64) error {
	return require(AdmitPostgres(ctx, tx, resource, token))
}

// MarkPostgres reads the mark of resource (0 when none, or no table yet).
func MarkPostgres(ctx context.Context, q Querier, resource string) (uint64, error) {
	var present bool
	err := q.QueryRowContext(ctx, "SELECT to_regclass('tenure_fence') IS NOT NULL").Scan(&present)
	if err != nil || !present {
		return 0, wrapRead(err)
	}
	return readMark(ctx, q, PgGet, resource)
}

// ---- both ----

func require(ok bool, err error) error {
	if err != nil {
		return err
	}
	if !ok {
		return ErrStale
	}
	return nil
}

func readMark(ctx context.Context, q Querier, query, resource string) (uint64, error) {
	var hwm int64
	err := q.QueryRowContext(ctx, query, resource).Scan(&hwm)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil || hwm < 0 {
		return 0, wrapRead(err)
	}
	return uint64(hwm), nil
}

func wrapRead(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("fence: read failed: %w", err)
}
