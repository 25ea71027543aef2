// SPDX-License-Identifier: MIT

// An example of docs/GO.md, compiled by go vet and go test (it needs a
// PostgreSQL and a driver; go/fencetest runs the same calls on real ones).

package fence_test

import (
	"context"
	"database/sql"
	"log"

	"tenure/fence"
)

// A fenced write in PostgreSQL: the decision and the row commit together.
func ExampleAdmitPostgres() {
	ctx := context.Background()
	// Any database/sql driver: here Debian's golang-github-lib-pq-dev,
	// imported as _ "github.com/lib/pq".
	db, err := sql.Open("postgres", "postgresql://app@db/app")
	if err != nil {
		log.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	ok, err := fence.AdmitPostgres(ctx, tx, "shard:8841", 403)
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		log.Fatal("token 403 is stale: a newer holder wrote")
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO rows VALUES ($1, $2)", "shard:8841", 403); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
}
