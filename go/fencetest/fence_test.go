// SPDX-License-Identifier: MIT

// The Go fence on real SQLite and PostgreSQL databases: the rule (admit
// iff token >= mark, equal admitted, the mark never moves down), the
// decision rolling back with its transaction, the C kit deciding the same
// on the same table in either order, and concurrent first uses creating
// the PostgreSQL schema once.

package fencetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"tenure/fence"
)

func admit(t *testing.T, s interface {
	Write(context.Context, string, uint64, int, bool) (bool, error)
}, resource string, token uint64) bool {
	t.Helper()
	ok, err := s.Write(context.Background(), resource, token, 0, true)
	if err != nil {
		t.Fatalf("fenced write of %s token %d: %v", resource, token, err)
	}
	return ok
}

func TestFenceRule(t *testing.T) {
	for _, kind := range sinkKinds {
		t.Run(kind, func(t *testing.T) {
			_, s := newSink(t, kind)
			ctx := context.Background()
			if m, err := s.Mark(ctx, "r"); err != nil || m != 0 {
				t.Fatalf("mark of a new resource = %d, %v; want 0", m, err)
			}
			steps := []struct {
				token uint64
				admit bool
				mark  uint64
			}{{5, true, 5}, {5, true, 5}, {4, false, 5}, {0, false, 5}, {7, true, 7}, {fence.TokenMax, true, fence.TokenMax}}
			for _, st := range steps {
				if got := admit(t, s, "r", st.token); got != st.admit {
					t.Fatalf("token %d: admitted %v, want %v", st.token, got, st.admit)
				}
				if m, err := s.Mark(ctx, "r"); err != nil || m != st.mark {
					t.Fatalf("after token %d: mark %d, %v; want %d", st.token, m, err, st.mark)
				}
			}
			if !admit(t, s, "other", 1) {
				t.Fatal("marks are per resource: token 1 of another resource was refused")
			}
		})
	}
}

func TestDecisionRollsBackWithTheWrite(t *testing.T) {
	for _, kind := range sinkKinds {
		t.Run(kind, func(t *testing.T) {
			_, s := newSink(t, kind)
			ctx := context.Background()
			admit(t, s, "r", 3)
			tx, err := s.DB.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Admit(ctx, tx, "r", 9); !ok || err != nil {
				t.Fatalf("token 9 over mark 3: %v, %v", ok, err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if m, _ := s.Mark(ctx, "r"); m != 3 {
				t.Fatalf("a rolled back admit moved the mark to %d", m)
			}
			require := fence.RequireSQLite
			if s.Postgres {
				require = fence.RequirePostgres
			}
			if tx, err = s.DB.BeginTx(ctx, nil); err != nil {
				t.Fatal(err)
			}
			err = require(ctx, tx, "r", 2)
			tx.Rollback()
			if !errors.Is(err, fence.ErrStale) {
				t.Fatalf("Require of token 2 under mark 3: %v, want ErrStale", err)
			}
		})
	}
}

// The Go and C kits share one table and rule, in either order.
func TestSharedWithTheCKit(t *testing.T) {
	for _, kind := range sinkKinds {
		t.Run(kind, func(t *testing.T) {
			spec, s := newSink(t, kind)
			if got := cKit(t, spec, "shared", 10); got != "admitted" {
				t.Fatalf("C kit on a new resource: %s", got)
			}
			if admit(t, s, "shared", 9) {
				t.Fatal("Go admitted token 9 under the C kit's mark 10")
			}
			if !admit(t, s, "shared", 10) || !admit(t, s, "shared", 11) {
				t.Fatal("Go refused tokens 10 or 11 over the C kit's mark 10")
			}
			if got := cKit(t, spec, "shared", 10); got != "stale" {
				t.Fatalf("C kit admitted token 10 under Go's mark 11: %s", got)
			}
			if got := cKit(t, spec, "shared", 11); got != "admitted" {
				t.Fatalf("C kit refused an equal token: %s", got)
			}
		})
	}
}

// First uses of a fresh database at once: the advisory lock makes the
// schema's creation safe (CREATE OR REPLACE FUNCTION races otherwise).
func TestPostgresSchemaCreatedConcurrently(t *testing.T) {
	_, s := newSink(t, "postgres")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := s.Write(context.Background(), "c", uint64(i+1), i, true); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent first use: %v", err)
	}
	if m, err := s.Mark(context.Background(), "c"); err != nil || m == 0 {
		t.Fatalf("mark after concurrent writes: %d, %v", m, err)
	}
}
