// SPDX-License-Identifier: MIT
// A session: one heartbeat for many leases (docs/SESSIONS.md).  Each lease
// taken under it keeps its own token, secret and fence; its liveness is the
// session's, so one renew keeps them all, and its safe time is the
// session's: the time left of the last acknowledged open or renew, counted
// from that request's sending, minus the safety margin.  The keepalive
// renews it at a third of its TTL and, when it ends, reports every lease
// still in it once, then the session once.

import { LeaseInfo, TenureError, infoOf, local } from "./errors";
import { OWNER_MAX, Transport, byteLen, checkName, drawId, now } from "./http";
import { Lease, errorOf } from "./lease";

/** Called once when the session ends: reason "lost", "expired" or "released" (after end()). */
export type SessionEndListener = (s: Session, reason: string, err: TenureError | undefined) => void;

/**
 * Called once for each lease of the session when it ends: with the session
 * (its reason), or alone ("released", err the release's error or
 * undefined; "lost" when a newer grant of the name replaced it).  Inside,
 * lease.held already reads false.  What it throws is dropped.
 */
export type LeaseEndListener = (l: Lease, reason: string, err: TenureError | undefined) => void;

export interface SessionOptions {
  /** The session's time to live in ms (required). */
  ttlMs: number;
  /** The session's owner_id and the default owner of its leases; default the client's owner id. */
  owner?: string;
  /** Do not start the keepalive: the caller renews (renew()) or calls keepAlive() later. */
  noKeepalive?: boolean;
  onEnd?: SessionEndListener;
  onLeaseEnd?: LeaseEndListener;
}

export interface SessionAcquireOptions {
  /** The holder; default the session's owner. */
  owner?: string;
  waitMs?: number;
  requestId?: string;
  lockDelayMs?: number;
}

export interface ClaimOptions {
  /** The owner of the grants; default the session's. */
  owner?: string;
  /** After a grant expires, nobody gets its name for this long. */
  lockDelayMs?: number;
}

/** The answer of a claim: every name decided on its own. */
export interface Claim {
  /** The names granted, as leases of this session, in the server's order. */
  granted: Lease[];
  /** The names held by others, with their holder. */
  held: { name: string; holder?: LeaseInfo }[];
  /** The names in their lock delay, with the ms it still lasts. */
  lockDelay: { name: string; retryAfterMs: number }[];
}

/** A live session as the server reports it (get, list); never its secret. */
export interface SessionInfo {
  id: string;
  ownerId: string;
  /** Its TTL (0 in a list: the list does not say). */
  ttlMs: number;
  /** The time it had left when the server answered. */
  expiresInMs: number;
  leases: number;
}

/** @internal */
export function sessionInfoOf(j: Record<string, unknown>): SessionInfo {
  const n = (k: string) => (typeof j[k] === "number" ? (j[k] as number) : 0);
  return { id: typeof j.session_id === "string" ? j.session_id : "", ownerId: typeof j.owner_id === "string" ? j.owner_id : "",
    ttlMs: n("ttl_ms"), expiresInMs: n("expires_in_ms"), leases: n("leases") };
}

/** The API takes at least 256 names and 64 KiB of body per batch: longer claims go as several. */
export const BATCH_NAMES = 256;
const BATCH_BODY_BYTES = 48 * 1024;

type State = "held" | "lost" | "expired" | "ended";

const sleepFor = (ms: number, wake: AbortSignal): Promise<void> => new Promise((r) => {
  const t = setTimeout(done, ms);
  t.unref(); // a keepalive keeps no process alive by itself
  function done(): void {
    clearTimeout(t);
    wake.removeEventListener("abort", done);
    r();
  }
  wake.addEventListener("abort", done, { once: true });
});

export class Session {
  readonly id: string;
  readonly ownerId: string;
  readonly #secret: string;
  readonly #t: Transport;
  readonly #margin: (ttl: number) => number;
  readonly #onEnd?: SessionEndListener;
  readonly #onLeaseEnd?: LeaseEndListener;
  readonly #leases = new Map<string, Lease>(); // live or not yet reported
  #state: State = "held";
  #ttlMs: number;
  #sent = 0;
  #deadline = 0;
  #hasDeadline = false; // false: adopted and not yet renewed
  #endErr?: TenureError;
  #kept?: Promise<void>; // the keepalive, until it reported the end
  #wake = new AbortController(); // aborted when the session ends: the keepalive looks
  #reported = false;

  /** @internal */
  constructor(t: Transport, margin: (ttl: number) => number, id: string, secret: string, owner: string, ttlMs: number,
    o: Partial<SessionOptions> = {}) {
    this.#t = t;
    this.#margin = margin;
    this.id = id;
    this.#secret = secret;
    this.ownerId = owner;
    this.#ttlMs = ttlMs;
    this.#onEnd = o.onEnd;
    this.#onLeaseEnd = o.onLeaseEnd;
  }

  /** @internal */
  static async open(t: Transport, margin: (ttl: number) => number, owner: string, o: SessionOptions): Promise<Session> {
    if (!(o.ttlMs >= 1)) throw local("invalid", "the TTL must be at least 1 ms");
    if (owner === "" || byteLen(owner) > OWNER_MAX) throw local("invalid", `owner id must be 1 to ${OWNER_MAX} bytes`);
    const a = await t.call("POST", "/v1/sessions", { owner_id: owner, ttl_ms: o.ttlMs });
    if (a.status === 404 || a.status === 405) {
      throw new TenureError("not_implemented", `this server has no sessions (HTTP ${a.status} for POST /v1/sessions)`,
        { status: a.status });
    }
    if (a.status !== 201 && a.status !== 200) throw errorOf(a);
    const b = a.body;
    if (typeof b.session_id !== "string" || !b.session_id || typeof b.session_secret !== "string" || !b.session_secret ||
      typeof b.expires_in_ms !== "number") {
      throw local("protocol", "session without session_id, session_secret or expires_in_ms");
    }
    const ttl = typeof b.ttl_ms === "number" && b.ttl_ms > 0 ? b.ttl_ms : o.ttlMs;
    const s = new Session(t, margin, b.session_id, b.session_secret, typeof b.owner_id === "string" ? b.owner_id : owner,
      ttl, o);
    s.#grant(a.sent, ttl, b.expires_in_ms);
    if (!o.noKeepalive) s.keepAlive();
    return s;
  }

  /** The credential of the session.  Never log it. */
  get secret(): string {
    return this.#secret;
  }

  /** The TTL as last granted (0 for an adopted session not yet renewed). */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  #grant(sent: number, ttl: number, expiresInMs: number): void {
    if (this.#state !== "held" || (this.#hasDeadline && sent < this.#sent)) return;
    this.#ttlMs = ttl;
    this.#sent = sent;
    this.#deadline = sent + expiresInMs - this.#margin(ttl);
    this.#hasDeadline = true;
  }

  #end(state: State, why?: TenureError): void {
    if (this.#state !== "held") return;
    this.#state = state;
    this.#endErr = why;
    this.#wake.abort();
  }

  /** @internal The safe time left at t (ms), 0 once ended; marks the expiry when it ran out. */
  safeForAt(t: number): number {
    if (this.#state === "held" && this.#hasDeadline && t >= this.#deadline) this.#end("expired");
    return this.#state === "held" && this.#hasDeadline ? this.#deadline - t : 0;
  }

  /** The session's safe time in ms, as a lease's: 0 once it ended, for good (and 0 until an adopted session is renewed). */
  get safeForMs(): number {
    return Math.floor(this.safeForAt(now()));
  }

  /** Whether the session (and so each lease of it) is safe to act on: read it right before each write. */
  get held(): boolean {
    return this.safeForAt(now()) > 0;
  }

  /** undefined while the session may be used, else why not: "expired", "lost" (the server's answer) or "ended". */
  get error(): TenureError | undefined {
    this.safeForAt(now());
    switch (this.#state) {
      case "expired":
        return local("expired", `the safe time of session ${this.id} ran out`);
      case "lost":
        return this.#endErr ?? local("lost", `session ${this.id} was lost`);
      case "ended":
        return local("ended", `session ${this.id} was ended`);
      default:
        return undefined;
    }
  }

  /** @internal The error a lease of it reads once it ended, undefined while it has not. */
  leaseError(): TenureError | undefined {
    const e = this.error;
    return this.#state === "ended" ? local("released", `released with the end of session ${this.id}`) : e;
  }

  /** @internal "lost", "expired", "released", or undefined while it has not ended. */
  endReason(): string | undefined {
    this.safeForAt(now());
    return this.#state === "held" ? undefined : this.#state === "ended" ? "released" : this.#state;
  }

  #usable(): void {
    const e = this.error;
    if (e) throw e;
  }

  /** The error of an answer; a 409 lost says the session ended (a 403 may be a name this principal may not take). */
  #refused(a: Parameters<typeof errorOf>[0]): TenureError {
    const e = errorOf(a);
    if (e.is("lost")) this.#end("lost", e);
    return e;
  }

  #path(suffix = ""): string {
    return `/v1/sessions/${encodeURIComponent(this.id)}${suffix}`;
  }

  /**
   * One renew for every lease of the session (the keepalive does it by
   * itself); its safe time then counts from this request's sending.  ttlMs
   * 0 keeps the TTL.  "lost" when the session ended on the server (never
   * revived), "forbidden" on a wrong secret (the handle is then lost too),
   * "expired" without sending anything once its safe time ran out, "ended"
   * after end().
   */
  async renew(ttlMs = 0): Promise<void> {
    return this.#renewBy(ttlMs, 0);
  }

  async #renewBy(ttlMs: number, deadline: number, cancel?: AbortSignal): Promise<void> {
    this.#usable();
    const a = await this.#t.call("PATCH", this.#path(),
      { session_secret: this.#secret, ...(ttlMs > 0 ? { ttl_ms: ttlMs } : {}) }, 0, deadline, cancel);
    if (a.status !== 200) {
      const e = errorOf(a);
      if (e.is("lost") || e.is("forbidden")) this.#end("lost", e);
      throw e;
    }
    if (typeof a.body.expires_in_ms !== "number") throw local("protocol", "session renew answer without expires_in_ms");
    const ttl = typeof a.body.ttl_ms === "number" && a.body.ttl_ms > 0 ? a.body.ttl_ms : ttlMs > 0 ? ttlMs : this.#ttlMs;
    this.#grant(a.sent, ttl, a.body.expires_in_ms);
    if (this.safeForAt(now()) <= 0) {
      throw this.error ?? local("expired", `the renew of session ${this.id} answered after its safe time ran out`);
    }
  }

  /**
   * Takes one name under the session (no TTL of its own: the session's).
   * A name this session already holds answers that grant again: the same
   * Lease.  Throws as Client.acquire, and "lost" when the session is not
   * live (it is then lost).
   */
  async acquire(name: string, o: SessionAcquireOptions = {}): Promise<Lease> {
    checkName(name);
    if ((o.waitMs ?? 0) < 0 || (o.lockDelayMs ?? 0) < 0) throw local("invalid", "wait and lock delay must not be negative");
    const owner = o.owner ?? this.ownerId;
    if (owner === "" || byteLen(owner) > OWNER_MAX) throw local("invalid", `owner id must be 1 to ${OWNER_MAX} bytes`);
    this.#usable();
    const body: Record<string, unknown> = { name, owner_id: owner, session_id: this.id, session_secret: this.#secret,
      request_id: o.requestId ?? drawId() };
    if (o.waitMs) body.wait_ms = o.waitMs;
    if (o.lockDelayMs) body.lock_delay_ms = o.lockDelayMs;
    const a = await this.#t.call("POST", "/v1/leases", body, o.waitMs ?? 0);
    if (a.status !== 200 && a.status !== 201) throw this.#refused(a);
    return this.#add(Lease.granted(this.#t, this.#margin, name, owner, 0, a, this));
  }

  /**
   * Puts a granted lease in the session.  The same grant answered again (a
   * replayed claim or acquire) gives back the handle it has; a newer grant
   * of a name replaces an older handle, which is reported lost.
   */
  #add(l: Lease): Lease {
    const old = this.#leases.get(l.name);
    if (old && old.token === l.token && !old.ownError) return old;
    this.#leases.set(l.name, l);
    if (old) {
      old.lose(local("lost", `lease "${old.name}" token ${old.token} was replaced by token ${l.token}`));
      this.leaseEnded(old);
    }
    if (this.#reported) this.leaseEnded(l); // ended and reported already: report this one now
    return l;
  }

  /** @internal Takes l out of the session and reports its end, once. */
  leaseEnded(l: Lease): void {
    if (this.#leases.get(l.name) !== l) return;
    this.#leases.delete(l.name);
    this.#tell(l);
  }

  #tell(l: Lease): void {
    try {
      this.#onLeaseEnd?.(l, l.endReason, l.endError);
    } catch {
      // a listener's failure is its own
    }
  }

  /** The leases of this session still held, by name. */
  leases(): Map<string, Lease> {
    return new Map([...this.#leases].filter(([, l]) => l.held));
  }

  /**
   * Claims many names at once (POST /v1/sessions/{id}/leases): each is
   * decided on its own, as a non-waiting acquire, and the result says
   * which were granted (a lease each), held (with the holder) or in their
   * lock delay.  More than BATCH_NAMES names (or 48 KiB of them) go as
   * several batches.  A name the session already holds answers that grant
   * again (the same Lease), so a claim whose answer was lost can simply be
   * sent again.  "lost" when the session is not live (it is then lost),
   * "forbidden" on a wrong secret or a name not permitted.
   */
  async claim(names: string[], o: ClaimOptions = {}): Promise<Claim> {
    const seen = new Set<string>();
    for (const n of names) {
      checkName(n);
      if (seen.has(n)) throw local("invalid", `name "${n}" is given twice`);
      seen.add(n);
    }
    if (o.owner !== undefined && (o.owner === "" || byteLen(o.owner) > OWNER_MAX)) {
      throw local("invalid", `owner id must be 1 to ${OWNER_MAX} bytes`);
    }
    const res: Claim = { granted: [], held: [], lockDelay: [] };
    for (let k = 0; k < names.length;) {
      let n = 0;
      let size = 0;
      while (k + n < names.length && n < BATCH_NAMES && (n === 0 || size + byteLen(names[k + n]) + 8 <= BATCH_BODY_BYTES)) {
        size += byteLen(names[k + n]) + 8;
        n++;
      }
      await this.#claimBatch(names.slice(k, k + n), o, res);
      k += n;
    }
    return res;
  }

  async #claimBatch(names: string[], o: ClaimOptions, res: Claim): Promise<void> {
    this.#usable();
    const body: Record<string, unknown> = { session_secret: this.#secret, names };
    if (o.owner !== undefined) body.owner_id = o.owner;
    if (o.lockDelayMs) body.lock_delay_ms = o.lockDelayMs;
    const a = await this.#t.call("POST", this.#path("/leases"), body);
    if (a.status !== 200) throw this.#refused(a);
    const asked = new Set(names);
    const list = (k: string) => (Array.isArray(a.body[k]) ? (a.body[k] as unknown[]) : [])
      .filter((x): x is Record<string, unknown> => !!x && typeof x === "object")
      .map((x) => {
        if (typeof x.name !== "string" || !asked.delete(x.name)) {
          throw local("protocol", `claim answer names ${String(x.name)}, not asked for`);
        }
        return x as Record<string, unknown> & { name: string };
      });
    const owner = o.owner ?? this.ownerId;
    const got = list("granted").map((g) => Lease.granted(this.#t, this.#margin, g.name, owner, 0,
      { status: 200, body: g, sent: a.sent }, this));
    for (const h of list("held")) {
      res.held.push({ name: h.name, holder: h.holder && typeof h.holder === "object"
        ? infoOf(h.holder as Record<string, unknown>) : undefined });
    }
    for (const d of list("lock_delay")) {
      res.lockDelay.push({ name: d.name, retryAfterMs: typeof d.retry_after_ms === "number" ? d.retry_after_ms : 0 });
    }
    for (const l of got) res.granted.push(this.#add(l));
    if (asked.size > 0) throw local("protocol", `claim answer leaves out ${asked.size} names`);
  }

  /**
   * Gives back several leases of this session (DELETE
   * /v1/sessions/{id}/leases, in batches of BATCH_NAMES); the session goes
   * on.  From this call on none of them is held, whatever the outcome; each
   * is reported ended ("released").  The result says which were released
   * and which were no longer live (lost).
   */
  async release(leases: Lease[]): Promise<{ released: Lease[]; lost: Lease[] }> {
    for (const l of leases) {
      if (l.session !== this) throw local("invalid", `${l.toString()} is not of session ${this.id}`);
    }
    for (const l of leases) l.markReleased();
    const released: Lease[] = [];
    const lost: Lease[] = [];
    let err: TenureError | undefined;
    try {
      for (let k = 0; k < leases.length; k += BATCH_NAMES) await this.#releaseBatch(leases.slice(k, k + BATCH_NAMES), released, lost);
    } catch (e) {
      if (!(e instanceof TenureError)) throw e;
      err = e;
    }
    const done = new Set(released);
    const gone = new Set(lost);
    for (const l of leases) {
      if (gone.has(l)) l.markReleased(local("lost", `lease "${l.name}" was not live when released`));
      else if (!done.has(l)) l.markReleased(err);
      this.leaseEnded(l);
    }
    if (err) throw err;
    return { released, lost };
  }

  async #releaseBatch(chunk: Lease[], released: Lease[], lost: Lease[]): Promise<void> {
    const a = await this.#t.call("DELETE", this.#path("/leases"),
      { session_secret: this.#secret, leases: chunk.map((l) => ({ name: l.name, token: l.token })) });
    if (a.status !== 200) throw this.#refused(a);
    const gone = new Set((Array.isArray(a.body.lost) ? (a.body.lost as Record<string, unknown>[]) : [])
      .map((x) => `${String(x?.name)}\u0000${String(x?.token)}`));
    for (const l of chunk) (gone.has(`${l.name}\u0000${l.token}`) ? lost : released).push(l);
  }

  /**
   * Starts the keepalive, once (Client.openSession does unless told not
   * to): it renews the session when a third of its TTL has passed since
   * the last acknowledged renew was sent, retries with backoff (TTL/30
   * doubling up to TTL/6) while safe time is left, bounds every renew by
   * the safe deadline, and when the session ends reports every lease still
   * in it, then the session.  Timers only: it keeps no process alive by
   * itself.
   */
  keepAlive(): void {
    if (this.#kept || this.#reported) return;
    this.#kept = this.#keep();
  }

  async #keep(): Promise<void> {
    let backoff = 0;
    let retryAt = 0;
    for (;;) {
      const t = now();
      this.safeForAt(t);
      if (this.#state !== "held") break;
      const next = backoff > 0 ? retryAt : this.#hasDeadline ? this.#sent + this.#ttlMs / 3 : t;
      if (t < next) {
        await sleepFor(Math.max(1, Math.min(next, this.#hasDeadline ? this.#deadline : next) - t), this.#wake.signal);
        continue;
      }
      try {
        await this.#renewBy(0, this.#hasDeadline ? this.#deadline : 0, this.#wake.signal);
        backoff = 0;
      } catch {
        if (this.endReason()) continue; // the next look reports it
        const ttl = this.#ttlMs > 0 ? this.#ttlMs : 3000; // an adopted session never renewed: back off as a 3 s one would
        const first = Math.max(10, ttl / 30);
        backoff = backoff ? Math.min(Math.max(first, ttl / 6), 2 * backoff) : first;
        retryAt = now() + backoff;
      }
    }
    this.#reportEnds();
  }

  /** Reports every lease still in the session, then the session, once. */
  #reportEnds(): void {
    if (this.#reported) return;
    this.#reported = true; // from now on a lease added is reported as it comes
    const all = [...this.#leases.values()];
    this.#leases.clear();
    for (const l of all) this.#tell(l);
    try {
      this.#onEnd?.(this, this.endReason() ?? "stopped", this.error);
    } catch {
      // a listener's failure is its own
    }
  }

  /**
   * Ends the session on the server (DELETE /v1/sessions/{id}): it and every
   * lease of it end now (released).  From this call on nothing of it is
   * held, whatever the outcome, and its leases are reported ended before it
   * resolves.  "lost" when it had already ended (lost or run out), "ended"
   * when end() was called before, else the server's error.
   */
  async end(): Promise<void> {
    this.safeForAt(now());
    const was = this.#state;
    const why = this.#endErr;
    if (was === "ended") throw local("ended", `session ${this.id} was ended`);
    if (was !== "held") await this.#reported_(); // lost or run out: its leases are told so, not "released"
    this.#state = "ended";
    this.#wake.abort();
    let err: TenureError | undefined;
    try {
      // sent even after a loss: a session that ran out here may still be live there for a moment
      const a = await this.#t.call("DELETE", this.#path(), { session_secret: this.#secret });
      if (a.status !== 200 && a.status !== 204) err = errorOf(a);
    } catch (e) {
      if (!(e instanceof TenureError)) throw e;
      err = e;
    }
    await this.#reported_();
    if (was === "lost") throw why ?? local("lost", `session ${this.id} had ended before end()`);
    if (was === "expired") throw local("lost", `session ${this.id} ran out before end()`);
    if (err) throw err;
  }

  /** Resolves once the end was reported: by the keepalive when kept, else now. */
  async #reported_(): Promise<void> {
    if (this.#kept) await this.#kept;
    else this.#reportEnds();
  }

  /** end(), but nothing when it was ended already. */
  async close(): Promise<void> {
    if (this.#state !== "ended") await this.end();
  }

  /** Resolves once the keepalive reported the session's end (never for a session not kept). */
  get done(): Promise<void> {
    return this.#kept ?? new Promise(() => undefined);
  }

  toString(): string {
    return `Session(id=${this.id}, owner="${this.ownerId}")`;
  }

  toJSON(): Record<string, unknown> {
    return { session_id: this.id, owner_id: this.ownerId };
  }
}
