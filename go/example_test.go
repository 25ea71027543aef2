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
	"os/signal"
	"time"

	"tenure"
	"tenure/fence"
	"tenure/share"
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

// A session: one heartbeat for a thousand shards.  HoldSession claims
// them, keeps the session alive while the body runs (cancelling its
// context on loss) and ends it, with every lease of it, at the end.
func ExampleClient_HoldSession() {
	ctx := context.Background()
	c, err := tenure.New(tenure.Options{URLs: []string{"http://127.0.0.1:7300"}, OwnerID: "indexer-04"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	shards := make([]string, 1000)
	for i := range shards {
		shards[i] = fmt.Sprintf("shard:%d", i)
	}
	err = c.HoldSession(ctx, tenure.SessionOptions{TTL: 3 * time.Second}, shards,
		func(ctx context.Context, s *tenure.Session, claim *tenure.ClaimResult) error {
			fmt.Printf("%d granted, %d held by others\n", len(claim.Granted), len(claim.Held))
			for ctx.Err() == nil && s.Held() { // right before each round of writes
				for _, l := range claim.Granted {
					_ = l.Token // stamp the shard's writes with its token
				}
				time.Sleep(time.Second)
			}
			return ctx.Err()
		})
	if errors.Is(err, tenure.ErrLost) {
		fmt.Println("the session was lost: every shard with it")
	}
}

// A fair-share worker: its session claims its share of the shards and
// gives back its surplus as workers of the group come and go.
func Example_share() {
	c, err := tenure.New(tenure.Options{URLs: []string{"http://127.0.0.1:7300"}})
	if err != nil {
		log.Fatal(err)
	}
	shards := make([]string, 1000)
	for i := range shards {
		shards[i] = fmt.Sprintf("shard:%04d", i)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err = share.Run(ctx, c, share.Options{Group: "indexers", Worker: "w1", Shards: shards,
		TTL: 3 * time.Second,
		OnGain: func(leases map[string]*tenure.Lease) {
			for name, l := range leases {
				fmt.Println("write", name, "with token", l.Token)
			}
		},
		OnLoss: func(names []string, why string) {
			// return only once nothing writes these any more
			fmt.Println("stop writing", len(names), "shards:", why)
		}})
	if err != nil {
		log.Fatal(err)
	}
}
