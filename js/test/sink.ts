// SPDX-License-Identifier: MIT
// A sink for the tests: a rows(resource, token, step) table in SQLite
// (spec "sqlite:PATH", better-sqlite3) or PostgreSQL (a postgresql:// URL,
// pg), written with or without the fence.

import Database from "better-sqlite3";
import { Client as PgClient } from "pg";
import { admitPostgres, admitSQLite, markPostgres, markSQLite } from "../src/fence";

const sqlite = (spec: string) => {
  const db = new Database(spec.slice("sqlite:".length), { timeout: 10_000 });
  return db;
};

export async function createData(spec: string): Promise<void> {
  const sql = "CREATE TABLE IF NOT EXISTS rows (resource TEXT, token BIGINT, step INTEGER)";
  if (spec.startsWith("sqlite:")) {
    const db = sqlite(spec);
    db.exec(sql);
    db.close();
    return;
  }
  const c = new PgClient({ connectionString: spec });
  await c.connect();
  await c.query(sql);
  await c.end();
}

/** One write: the fence's decision and the row in one transaction (or the row alone, unfenced). */
export async function write(spec: string, resource: string, token: number, step: number, fenced: boolean): Promise<boolean> {
  if (spec.startsWith("sqlite:")) {
    const db = sqlite(spec);
    try {
      // IMMEDIATE: the write transaction holds the database from its BEGIN
      return db.transaction(() => {
        if (fenced && !admitSQLite(db, resource, token)) return false;
        db.prepare("INSERT INTO rows VALUES (?, ?, ?)").run(resource, token, step);
        return true;
      }).immediate();
    } finally {
      db.close();
    }
  }
  const c = new PgClient({ connectionString: spec });
  await c.connect();
  try {
    await c.query("BEGIN");
    if (fenced && !(await admitPostgres(c, resource, token))) {
      await c.query("ROLLBACK");
      return false;
    }
    await c.query("INSERT INTO rows VALUES ($1, $2, $3)", [resource, token, step]);
    await c.query("COMMIT");
    return true;
  } finally {
    await c.end();
  }
}

/** The rows in insertion order, as "resource/token/step". */
export async function rows(spec: string): Promise<string[]> {
  if (spec.startsWith("sqlite:")) {
    const db = sqlite(spec);
    const r = db.prepare("SELECT resource, token, step FROM rows ORDER BY rowid").all() as Record<string, unknown>[];
    db.close();
    return r.map((x) => `${x.resource}/${x.token}/${x.step}`);
  }
  const c = new PgClient({ connectionString: spec });
  await c.connect();
  const r = await c.query("SELECT resource, token, step FROM rows ORDER BY ctid");
  await c.end();
  return r.rows.map((x) => `${x.resource}/${x.token}/${x.step}`);
}

export async function mark(spec: string, resource: string): Promise<number> {
  if (spec.startsWith("sqlite:")) {
    const db = sqlite(spec);
    const m = markSQLite(db, resource);
    db.close();
    return m;
  }
  const c = new PgClient({ connectionString: spec });
  await c.connect();
  const m = await markPostgres(c, resource);
  await c.end();
  return m;
}

let dbs = 0;

/**
 * A fresh sink of kind "sqlite" or "postgres" with its rows table: its
 * spec, or undefined when kind is postgres and TENURE_TEST_PG_URL is not
 * set (scripts/with-pg.sh); a set URL that cannot be reached fails.
 */
export async function newSink(kind: string, dir: string): Promise<string | undefined> {
  let spec = `sqlite:${dir}/sink-${++dbs}.db`;
  if (kind === "postgres") {
    const base = process.env.TENURE_TEST_PG_URL;
    if (!base) return undefined;
    const name = `tn_js_${process.pid}_${++dbs}`;
    const c = new PgClient({ connectionString: base });
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
    await c.end();
    spec = base.replace(/\/[^/]*$/, `/${name}`);
  }
  await createData(spec);
  return spec;
}
