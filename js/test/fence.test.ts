// SPDX-License-Identifier: MIT
// The fences on a real SQLite file (better-sqlite3) and a real PostgreSQL
// (pg): the rule, the decision rolled back with its transaction, the checks
// before anything is sent, and the C kit's statements and table shared.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import Database from "better-sqlite3";
import { Client as PgClient } from "pg";
import * as fence from "../src/fence";
import { cKit, src } from "./server";
import { newSink } from "./sink";

const dir = mkdtempSync(join(tmpdir(), "tenure-js-fence-"));

/** Each run of adjacent C string literals of src/fence/FILE, joined. */
function cStrings(file: string): string[] {
  const text = readFileSync(join(src(), "src", "fence", file), "utf8");
  const out: string[] = [];
  let cur = "";
  let end = -1;
  for (const m of text.matchAll(/"((?:[^"\\\n]|\\.)*)"/g)) {
    if (end >= 0 && text.slice(end, m.index).trim() !== "") {
      out.push(cur);
      cur = "";
    }
    cur += m[1];
    end = m.index! + m[0].length;
  }
  return [...out, cur];
}

test("the statements are the C kit's", () => {
  for (const [file, stmts] of [["sqlite.c", [fence.SQLITE_CREATE, fence.SQLITE_UPSERT, fence.SQLITE_GET]],
    ["pg.c", [fence.PG_CREATE_TABLE, fence.PG_CREATE_FUNCTION, fence.PG_ADVANCE, fence.PG_GET]]] as const) {
    const lits = cStrings(file);
    for (const s of stmts) assert.ok(lits.some((l) => l.includes(s)), `${file} does not contain ${s}`);
  }
});

interface Tx {
  admit(r: string, t: number): Promise<boolean>;
  mark(r: string): Promise<number>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): Promise<void>;
}

async function open(spec: string): Promise<Tx> {
  if (spec.startsWith("sqlite:")) {
    const db = new Database(spec.slice(7));
    db.exec("BEGIN IMMEDIATE");
    return {
      admit: async (r, t) => fence.admitSQLite(db, r, t),
      mark: async (r) => fence.markSQLite(db, r),
      commit: async () => { db.exec("COMMIT"); db.exec("BEGIN IMMEDIATE"); },
      rollback: async () => { db.exec("ROLLBACK"); db.exec("BEGIN IMMEDIATE"); },
      close: async () => { db.exec("ROLLBACK"); db.close(); },
    };
  }
  const c = new PgClient({ connectionString: spec });
  await c.connect();
  await c.query("BEGIN");
  return {
    admit: (r, t) => fence.admitPostgres(c, r, t),
    mark: (r) => fence.markPostgres(c, r),
    commit: async () => { await c.query("COMMIT"); await c.query("BEGIN"); },
    rollback: async () => { await c.query("ROLLBACK"); await c.query("BEGIN"); },
    close: async () => { await c.query("ROLLBACK"); await c.end(); },
  };
}

for (const kind of ["sqlite", "postgres"]) {
  test(`the rule, shared with the C kit (${kind})`, async (t) => {
    const spec = await newSink(kind, dir);
    if (!spec) return t.skip("TENURE_TEST_PG_URL is not set (run under scripts/with-pg.sh)");
    let tx = await open(spec);
    assert.equal(await tx.mark("r"), 0);
    assert.equal(await tx.admit("r", 5), true);
    assert.equal(await tx.admit("r", 5), true, "an equal token is the same holder's");
    assert.equal(await tx.admit("r", 4), false, "a lower token is stale");
    assert.equal(await tx.admit("r", 7), true);
    assert.equal(await tx.mark("r"), 7);
    await tx.commit();
    assert.equal(await tx.admit("r", 9), true);
    await tx.rollback(); // the decision goes with its transaction
    assert.equal(await tx.mark("r"), 7);
    await tx.close();
    assert.equal(cKit(spec, "r", 6), "stale");
    assert.equal(cKit(spec, "r", 8), "admitted");
    tx = await open(spec);
    assert.equal(await tx.admit("r", 7), false, "the mark the C kit raised");
    assert.equal(await tx.admit("other", 1), true, "marks are per resource");
    await tx.close();
  });
}

test("arguments and the transaction are checked first", async (t) => {
  const db = new Database(join(dir, "args.db"));
  db.exec("BEGIN");
  for (const r of ["", "x".repeat(fence.NAME_MAX + 1), "a\0b"]) assert.throws(() => fence.admitSQLite(db, r, 1), RangeError);
  for (const tok of [fence.TOKEN_MAX + 1, -1, 1.5]) assert.throws(() => fence.admitSQLite(db, "a", tok), RangeError);
  assert.equal(fence.admitSQLite(db, "x".repeat(fence.NAME_MAX), fence.TOKEN_MAX), true);
  db.exec("COMMIT");
  assert.throws(() => fence.admitSQLite(db, "a", 1), /outside a transaction/);
  db.close();
  const spec = await newSink("postgres", dir);
  if (!spec) return t.skip("TENURE_TEST_PG_URL is not set (run under scripts/with-pg.sh)");
  const c = new PgClient({ connectionString: spec });
  await c.connect();
  await assert.rejects(fence.admitPostgres(c, "a", 1), /outside a transaction/);
  assert.equal(await fence.markPostgres(c, "a"), 0, "nothing was decided outside the transaction");
  await c.end();
});
