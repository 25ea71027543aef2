// SPDX-License-Identifier: MIT

// Examples of docs/GO.md, compiled by go vet and go test (they need a
// server and a database driver, so they are not run here; go/fencetest
// runs the same calls against real ones).

package tenure_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"tenure"
	"tenure/fence"
)

// A complete worker: hold the lease, check it right before each write,
// stamp each write with the token and let the sink fence it, stop on loss.
func Example_worker() {
	ctx := context.Background()
	server := os.Getenv("TENURE_SERVER")
	if server == "" {
		server = "http://127.0.0.1:7300"
	}
	// Any database/sql driver: here Debian's golang-github-mattn-go-sqlite3-dev,
	// imported as _ "github.com/mattn/go-sqlite3" (build with -tags libsqlite3).
	db, err := sql.Open("sqlite3", "file:sink.db?_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS rows (shard TEXT, token INTEGER, step INTEGER)"); err != nil {
		log.Fatal(err)
	}
	c, err := tenure.New(tenure.Options{URLs: []string{server}, OwnerID: "indexer-04"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	err = c.Hold(ctx, "shard:8841", tenure.AcquireOptions{TTL: 3 * time.Second},
		func(ctx context.Context, l *tenure.Lease) error {
			for step := 0; step < 20; step++ {
				time.Sleep(50 * time.Millisecond) // do some work
				if !l.Held() {                    // right before each write
					return l.Err()
				}
				if err := write(ctx, db, l, step); err != nil {
					return err // fence.ErrStale: a newer holder wrote: stop
				}
			}
			return nil
		})
	var e *tenure.Error
	switch {
	case errors.As(err, &e) && e.Holder != nil:
		fmt.Printf("held by %s (token %d)\n", e.Holder.OwnerID, e.Holder.Token)
	case errors.Is(err, tenure.ErrLost), errors.Is(err, fence.ErrStale):
		fmt.Println("lost the lease: stopped; acquire again for a new token")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("done, released")
	}
}

// write is one fenced write: the mark and the row in one transaction.
func write(ctx context.Context, db *sql.DB, l *tenure.Lease, step int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit it does nothing
	if err := fence.RequireSQLite(ctx, tx, l.Name, l.Token); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO rows VALUES (?, ?, ?)", l.Name, l.Token, step); err != nil {
		return err
	}
	return tx.Commit()
}

// Acquire, renew and release by hand.
func ExampleClient_Acquire() {
	ctx := context.Background()
	c, err := tenure.New(tenure.Options{URLs: []string{"http://127.0.0.1:7300"}})
	if err != nil {
		log.Fatal(err)
	}
	l, err := c.Acquire(ctx, "shard:8841", tenure.AcquireOptions{TTL: 10 * time.Second, Wait: 30 * time.Second})
	if errors.Is(err, tenure.ErrHeld) {
		log.Fatal("still held after 30 s: ", err)
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(l.Token, l.SafeFor() > 0)
	if err := l.Renew(ctx, 0); errors.Is(err, tenure.ErrLost) {
		log.Fatal("gone for good: acquire again for a new token")
	}
	if err := l.Release(ctx); err != nil {
		log.Print(err)
	}
}

// Follow the events of a prefix, resuming after the last id seen.
func ExampleClient_Events() {
	c, err := tenure.New(tenure.Options{URLs: []string{"http://127.0.0.1:7300"}})
	if err != nil {
		log.Fatal(err)
	}
	s := c.Events(context.Background(), "shard:", tenure.EventOptions{})
	defer s.Close()
	for s.Next() {
		ev := s.Event()
		if ev.Type == "reset" {
			fmt.Println("events may have been missed: read the state again")
			continue
		}
		fmt.Println(ev.Type, ev.Name, ev.OwnerID, ev.Token, ev.Floor)
	}
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}
}

// A sink that can call the service checks a token against the floor.
func ExampleClient_Check() {
	c, err := tenure.New(tenure.Options{URLs: []string{"http://127.0.0.1:7300"}})
	if err != nil {
		log.Fatal(err)
	}
	r, err := c.Check(context.Background(), "shard:8841", 403)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Current, r.Floor)
}
