// SPDX-License-Identifier: MIT

// The fence's SQL is the C kit's, byte for byte: each statement here must
// appear in src/fence/sqlite.c or src/fence/pg.c (adjacent C string
// literals joined), so the three kits can never drift apart on one table.
// The behaviour on real databases is tested in go/fencetest.

package fence

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tenure/internal/testserver"
)

// cStrings joins each run of adjacent C string literals of file.
func cStrings(t *testing.T, file string) []string {
	b, err := os.ReadFile(filepath.Join(testserver.Src(), "src", "fence", file))
	if err != nil {
		t.Fatal(err)
	}
	lit := regexp.MustCompile(`"((?:[^"\\\n]|\\.)*)"`)
	src := string(b)
	var out []string
	cur, end := "", -1
	for _, m := range lit.FindAllStringSubmatchIndex(src, -1) {
		if end >= 0 && strings.TrimSpace(src[end:m[0]]) != "" {
			out = append(out, cur)
			cur = ""
		}
		cur += src[m[2]:m[3]]
		end = m[1]
	}
	return append(out, cur)
}

func TestStatementsAreTheCKits(t *testing.T) {
	for file, stmts := range map[string][]string{
		"sqlite.c": {SQLiteCreate, SQLiteUpsert, SQLiteGet},
		"pg.c":     {PgCreateTable, PgCreateFunction, PgAdvance, PgGet},
	} {
		lits := cStrings(t, file)
		for _, s := range stmts {
			found := false
			for _, l := range lits {
				found = found || strings.Contains(l, s)
			}
			if !found {
				t.Errorf("%s does not contain the statement %q", file, s)
			}
		}
	}
}

func TestArgumentsAreCheckedBeforeAnyStatement(t *testing.T) {
	for _, c := range []struct {
		resource string
		token    uint64
	}{{"", 1}, {strings.Repeat("x", NameMax+1), 1}, {"a\x00b", 1}, {"a", TokenMax + 1}} {
		// A nil transaction: reaching the database would panic.
		ctx := context.Background()
		if _, err := AdmitSQLite(ctx, nil, c.resource, c.token); !errors.Is(err, ErrInvalid) {
			t.Errorf("AdmitSQLite(%q, %d) = %v, want ErrInvalid", c.resource, c.token, err)
		}
		if _, err := AdmitPostgres(ctx, nil, c.resource, c.token); !errors.Is(err, ErrInvalid) {
			t.Errorf("AdmitPostgres(%q, %d) = %v, want ErrInvalid", c.resource, c.token, err)
		}
	}
	if err := args(strings.Repeat("x", NameMax), TokenMax); err != nil {
		t.Errorf("the largest valid arguments are refused: %v", err)
	}
}
