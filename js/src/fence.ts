// SPDX-License-Identifier: MIT
// The fence for PostgreSQL (the pg package) and SQLite (better-sqlite3):
// admit a write only if its fencing token is at least the highest token
// the sink has seen for the resource (the mark), and raise the mark in the
// same transaction as the write.  Equal tokens are admitted (the same
// holder's writes), lower ones are refused, and the mark never moves down.
// The table and SQL are the C kit's (src/fence/sqlite.c, src/fence/pg.c),
// so writers in any of the project's languages can share one sink.

/** Tokens are JSON integers below 2^53: every one is a safe integer of JavaScript. */
export const TOKEN_MAX = Number.MAX_SAFE_INTEGER;
/** Bytes of a resource (lease) name, at most. */
export const NAME_MAX = 256;
/** The advisory lock under which the PostgreSQL schema is created. */
export const PG_LOCK_KEY = 7300406;

/** The statements of the C kit (src/fence/sqlite.c), byte for byte. */
export const SQLITE_CREATE = "CREATE TABLE IF NOT EXISTS tenure_fence (" +
  " resource TEXT PRIMARY KEY NOT NULL," +
  " hwm INTEGER NOT NULL CHECK (hwm >= 0))";
export const SQLITE_UPSERT = "INSERT INTO tenure_fence(resource, hwm) VALUES (?1, ?2)" +
  " ON CONFLICT(resource) DO UPDATE SET hwm = excluded.hwm" +
  " WHERE tenure_fence.hwm <= excluded.hwm";
export const SQLITE_GET = "SELECT hwm FROM tenure_fence WHERE resource=?1";

/** The statements of the C kit (src/fence/pg.c), byte for byte. */
export const PG_CREATE_TABLE = "CREATE TABLE IF NOT EXISTS tenure_fence (" +
  " resource text PRIMARY KEY," +
  " hwm bigint NOT NULL CHECK (hwm >= 0));";
export const PG_CREATE_FUNCTION = "CREATE OR REPLACE FUNCTION tenure_fence_advance(resource text," +
  " token bigint) RETURNS boolean LANGUAGE sql VOLATILE AS $f$" +
  " WITH up AS (" +
  "  INSERT INTO tenure_fence AS f (resource, hwm) VALUES ($1, $2)" +
  "  ON CONFLICT (resource) DO UPDATE SET hwm = EXCLUDED.hwm" +
  "  WHERE f.hwm <= EXCLUDED.hwm RETURNING 1)" +
  " SELECT EXISTS (SELECT 1 FROM up) $f$;";
export const PG_ADVANCE = "SELECT tenure_fence_advance($1, $2::bigint)";
export const PG_GET = "SELECT hwm FROM tenure_fence WHERE resource=$1";
const PG_PRESENT = "SELECT to_regclass('tenure_fence') IS NOT NULL" +
  " AND to_regprocedure('tenure_fence_advance(text,bigint)') IS NOT NULL AS present";

/** Thrown by the require functions when the token is below the mark. */
export class StaleTokenError extends Error {
  constructor(resource: string, token: number) {
    super(`fence: token ${token} of "${resource}" is below the mark (stale)`);
    this.name = "StaleTokenError";
  }
}

/** What the SQLite fence needs of a better-sqlite3 Database. */
export interface SQLiteDatabase {
  readonly inTransaction: boolean;
  exec(sql: string): unknown;
  prepare(sql: string): { run(...args: unknown[]): { changes: number }; get(...args: unknown[]): unknown };
}

/** What the PostgreSQL fence needs of a pg Client or PoolClient. */
export interface PgClient {
  query(sql: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

function checkArgs(resource: string, token: number): void {
  if (typeof resource !== "string" || resource.length === 0 || resource.includes("\0") ||
    Buffer.byteLength(resource, "utf8") > NAME_MAX) {
    throw new RangeError(`fence: resource must be 1 to ${NAME_MAX} bytes without NUL`);
  }
  if (!Number.isSafeInteger(token) || token < 0 || token > TOKEN_MAX) {
    throw new RangeError(`fence: token ${token} is not an integer in [0, 2^53)`);
  }
}

/**
 * Decides one write inside db's open transaction: true when token is
 * admitted (it is at least the mark; the mark is now token), false when it
 * is stale (the mark is unchanged).  Creates the table if missing.  SQLite
 * has no row locks: open the transaction with BEGIN IMMEDIATE (better-
 * sqlite3: db.transaction(fn).immediate()) where several processes write.
 * RangeError for bad arguments and Error outside a transaction, before
 * anything is sent.
 */
export function admitSQLite(db: SQLiteDatabase, resource: string, token: number): boolean {
  checkArgs(resource, token);
  if (!db.inTransaction) throw new Error("fence: check outside a transaction");
  db.exec(SQLITE_CREATE);
  // ?1 and ?2 are numbered parameters: better-sqlite3 binds them by number
  return db.prepare(SQLITE_UPSERT).run({ 1: resource, 2: token }).changes === 1;
}

/** admitSQLite throwing StaleTokenError instead of returning false. */
export function requireSQLite(db: SQLiteDatabase, resource: string, token: number): void {
  if (!admitSQLite(db, resource, token)) throw new StaleTokenError(resource, token);
}

/** The SQLite mark of resource (0 when none, or no table yet). */
export function markSQLite(db: SQLiteDatabase, resource: string): number {
  const t = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type='table' AND name='tenure_fence'").get() as { n: number };
  if (!t.n) return 0;
  const r = db.prepare(SQLITE_GET).get({ 1: resource }) as { hwm: number } | undefined;
  return r ? Number(r.hwm) : 0;
}

/**
 * Creates the PostgreSQL mark table and tenure_fence_advance if missing,
 * inside the caller's transaction, under the kit's advisory lock (as
 * tn_fence_pg_migrate does), so any number of processes may run it at once.
 */
export async function migratePostgres(c: PgClient): Promise<void> {
  const r = await c.query(PG_PRESENT);
  if (r.rows[0]?.present === true) return;
  await c.query("SET LOCAL client_min_messages = warning");
  await c.query(`SELECT pg_advisory_xact_lock(${PG_LOCK_KEY})`);
  await c.query(PG_CREATE_TABLE);
  await c.query(PG_CREATE_FUNCTION);
}

/**
 * Decides one write inside the client's open transaction (BEGIN … COMMIT
 * on one pg Client): true when token is admitted (the mark is now token),
 * false when stale.  Creates the schema if missing.  The row lock of the
 * upsert orders concurrent writers of one resource until the transaction
 * ends.  Outside a transaction it fails before anything is decided (a
 * savepoint exists only inside one).
 */
export async function admitPostgres(c: PgClient, resource: string, token: number): Promise<boolean> {
  checkArgs(resource, token);
  try {
    await c.query("SAVEPOINT tenure_fence_in_txn");
  } catch (e) {
    throw new Error(`fence: check outside a transaction (${(e as Error).message})`);
  }
  await c.query("RELEASE SAVEPOINT tenure_fence_in_txn");
  await migratePostgres(c);
  const r = await c.query(PG_ADVANCE, [resource, token]);
  return r.rows[0]?.tenure_fence_advance === true;
}

/** admitPostgres throwing StaleTokenError instead of returning false. */
export async function requirePostgres(c: PgClient, resource: string, token: number): Promise<void> {
  if (!(await admitPostgres(c, resource, token))) throw new StaleTokenError(resource, token);
}

/** The PostgreSQL mark of resource (0 when none, or no table yet). */
export async function markPostgres(c: PgClient, resource: string): Promise<number> {
  const t = await c.query("SELECT to_regclass('tenure_fence') IS NOT NULL AS present");
  if (t.rows[0]?.present !== true) return 0;
  const r = await c.query(PG_GET, [resource]);
  return r.rows.length ? Number(r.rows[0].hwm) : 0;
}
