// SPDX-License-Identifier: MIT
// The client: several servers (the next one when nothing was sent, or on a
// 503), acquire with a drawn request_id, adopt, get, list, check, force
// release, hold (acquire, keep alive, abort the body's signal when the
// lease is lost, release), events, and sessions (open, adopt, get, list,
// force end, holdSession).

import { hostname } from "node:os";
import { CheckResult } from "./check";
import { LeaseInfo, TenureError, infoOf, local } from "./errors";
import { EventOptions, EventStream } from "./events";
import { OWNER_MAX, TOKEN_MAX, Transport, byteLen, checkName, drawId, leasePath, now } from "./http";
import { Lease, errorOf } from "./lease";
import { Claim, Session, SessionInfo, SessionOptions, sessionInfoOf } from "./session";

export interface ClientOptions {
  /** The servers' base URLs ("http://127.0.0.1:7300"; "host:port" means http://), 1 to 8. */
  urls: string[];
  /** The owner of acquires that name none; default "host:pid". */
  ownerId?: string;
  /** Sent as "Authorization: Bearer"; never logged. */
  bearer?: string;
  /** Bounds each request beyond an acquire's wait; default 5000 ms. */
  requestTimeoutMs?: number;
  /** Subtracted from the time a grant has left; default a tenth of the TTL. */
  safetyMarginMs?: number;
}

export interface AcquireOptions {
  /** The lease's time to live in ms (required). */
  ttlMs: number;
  /** The holder; default the client's owner id. */
  owner?: string;
  /** Queue on the server (first come, first served per name) for up to this long while the name is held. */
  waitMs?: number;
  /**
   * Makes a retry idempotent: the same name, owner and request id while the
   * grant is live return that grant again.  Default: one drawn for this
   * call (every acquire carries one: the client sends a request again to
   * the next server after a 503, which does not prove that nothing was done).
   */
  requestId?: string;
  /** After this lease expires (not after a release), nobody gets the name for this long. */
  lockDelayMs?: number;
}

/** The body of hold(): it gets the lease and a signal aborted when the lease is lost. */
export type HoldBody<T> = (lease: Lease, signal: AbortSignal) => Promise<T> | T;

/** The body of holdSession(): the session, what its claim answered, and a signal aborted when the session is lost. */
export type HoldSessionBody<T> = (session: Session, claim: Claim, signal: AbortSignal) => Promise<T> | T;

export class Client {
  readonly ownerId: string;
  readonly #t: Transport;
  readonly #marginMs: number;

  constructor(o: ClientOptions) {
    this.#t = new Transport({ urls: o.urls, bearer: o.bearer, requestTimeoutMs: o.requestTimeoutMs ?? 5000 });
    this.ownerId = o.ownerId ?? `${hostname() || "localhost"}:${process.pid}`;
    if (this.ownerId === "" || byteLen(this.ownerId) > OWNER_MAX) {
      throw local("invalid", `owner id must be 1 to ${OWNER_MAX} bytes`);
    }
    this.#marginMs = o.safetyMarginMs ?? 0;
  }

  #margin = (ttl: number): number => (this.#marginMs > 0 ? this.#marginMs : ttl / 10);

  /**
   * Takes the lease name.  Throws TenureError "held" (its holder says who
   * holds it), "lock_delay" (retryAfterMs), "timeout" (the outcome is
   * unknown: retry with the same requestId), "connect", or another.  The
   * lease's safe time counts from the instant just before the request was
   * sent; a waiting acquire whose wait used up more than half of it renews
   * once before returning.
   */
  async acquire(name: string, o: AcquireOptions): Promise<Lease> {
    checkName(name);
    if (!(o.ttlMs >= 1) || (o.waitMs ?? 0) < 0 || (o.lockDelayMs ?? 0) < 0) {
      throw local("invalid", "the TTL must be at least 1 ms; wait and lock delay not negative");
    }
    const owner = o.owner ?? this.ownerId;
    if (owner === "" || byteLen(owner) > OWNER_MAX) throw local("invalid", `owner id must be 1 to ${OWNER_MAX} bytes`);
    const body: Record<string, unknown> = { name, owner_id: owner, ttl_ms: o.ttlMs, request_id: o.requestId ?? drawId() };
    if (o.waitMs) body.wait_ms = o.waitMs;
    if (o.lockDelayMs) body.lock_delay_ms = o.lockDelayMs;
    const a = await this.#t.call("POST", "/v1/leases", body, o.waitMs ?? 0);
    const l = Lease.granted(this.#t, this.#margin, name, owner, o.ttlMs, a);
    if (o.waitMs) await l.refreshWaited();
    return l;
  }

  /** A handle for a grant made elsewhere (e.g. by "tenure acquire"); its safe time is 0 until a renew succeeds. */
  adopt(name: string, token: number, secret: string): Lease {
    checkName(name);
    if (!secret || !Number.isSafeInteger(token) || token < 0 || token > TOKEN_MAX) {
      throw local("invalid", "a token up to 2^53 and a secret are needed");
    }
    return new Lease(this.#t, this.#margin, name, "", token, secret);
  }

  /** The live lease of name; TenureError "not_found" when it is free. */
  async get(name: string): Promise<LeaseInfo> {
    checkName(name);
    const a = await this.#t.call("GET", leasePath(name));
    if (a.status !== 200) throw errorOf(a);
    if (typeof a.body.token !== "number") throw local("protocol", "lease without a token");
    return infoOf(a.body);
  }

  /** One page of live leases in name order, and the after of the next page (undefined at the end). */
  async list(o: { prefix?: string; after?: string; limit?: number } = {}): Promise<{ leases: LeaseInfo[]; next?: string }> {
    const b = await this.#page("/v1/leases", o);
    const leases = Array.isArray(b.leases) ? (b.leases as Record<string, unknown>[]).map(infoOf) : [];
    return { leases, next: typeof b.next === "string" ? b.next : undefined };
  }

  /** Whether token is the live grant of name, the live token, and the name's floor. */
  async check(name: string, token: number): Promise<CheckResult> {
    checkName(name);
    if (!Number.isSafeInteger(token) || token < 0 || token > TOKEN_MAX) throw local("invalid", "a token is 0 to 2^53");
    const a = await this.#t.call("GET", `${leasePath(name)}/check?token=${token}`);
    if (a.status !== 200) throw errorOf(a);
    const { current, floor } = a.body;
    if (typeof current !== "boolean" || typeof floor !== "number") throw local("protocol", "check answer without current or floor");
    const t = typeof a.body.token === "number" ? a.body.token : null;
    return { current, live: t !== null, token: t, floor };
  }

  /** Ends whatever grant of name is live (an admin's operation with auth on); "lost" when none was. */
  async forceRelease(name: string): Promise<void> {
    checkName(name);
    const a = await this.#t.call("DELETE", `${leasePath(name)}?force=true`);
    if (a.status !== 200 && a.status !== 204) throw errorOf(a);
  }

  /** Follows the lease events of names starting with prefix (GET /v1/events). */
  events(prefix = "", o: EventOptions = {}): EventStream {
    return new EventStream(this.#t, prefix, o);
  }

  /**
   * Opens a session (POST /v1/sessions): one heartbeat for many leases
   * (docs/SESSIONS.md).  Its keepalive starts at once unless noKeepalive.
   * Throws "not_implemented" when the server has no sessions, "capacity"
   * (503) at --max-sessions.  An open is not idempotent: one sent again
   * after a 503 that hid a success leaves the first session to expire,
   * holding nothing.  openSession(ttlMs, owner?) is openSession({ ttlMs, owner }).
   */
  openSession(o: SessionOptions | number, owner?: string): Promise<Session> {
    const so = typeof o === "number" ? { ttlMs: o, owner } : o;
    return Session.open(this.#t, this.#margin, so.owner ?? this.ownerId, so);
  }

  /**
   * A handle for a session opened elsewhere (e.g. "tenure session open"),
   * to renew, claim under or end it; its owner is o.owner or the client's.
   * Its safe time is 0 until a renew succeeds; it is not kept until
   * keepAlive().
   */
  adoptSession(id: string, secret: string, o: Partial<SessionOptions> = {}): Session {
    if (!id || !secret) throw local("invalid", "a session id and its secret are needed");
    return new Session(this.#t, this.#margin, id, secret, o.owner ?? this.ownerId, 0, o);
  }

  #sessionPath(id: string): string {
    if (!id) throw local("invalid", "a session id is needed");
    return `/v1/sessions/${encodeURIComponent(id)}`;
  }

  /** The live session id (owner, TTL, time left, number of leases; never its secret); "not_found" when it is not live. */
  async getSession(id: string): Promise<SessionInfo> {
    const a = await this.#t.call("GET", this.#sessionPath(id));
    if (a.status !== 200) throw errorOf(a);
    return sessionInfoOf(a.body);
  }

  /** Ends the session id and every lease of it (each revoked): an admin's operation with auth on; "lost" when it is not live. */
  async forceEndSession(id: string): Promise<void> {
    const a = await this.#t.call("DELETE", `${this.#sessionPath(id)}?force=true`);
    if (a.status !== 200 && a.status !== 204) throw errorOf(a);
  }

  async #page(path: string, o: { prefix?: string; after?: string; limit?: number }): Promise<Record<string, unknown>> {
    const q = new URLSearchParams();
    if (o.prefix) q.set("prefix", o.prefix);
    if (o.after) q.set("after", o.after);
    if (o.limit) q.set("limit", String(o.limit));
    const qs = q.toString();
    const a = await this.#t.call("GET", `${path}${qs ? `?${qs}` : ""}`);
    if (a.status !== 200) throw errorOf(a);
    return a.body;
  }

  /** One page of live sessions whose owner_id starts with prefix, in session_id order, and the after of the next page. */
  async sessions(o: { prefix?: string; after?: string; limit?: number } = {}): Promise<{ sessions: SessionInfo[]; next?: string }> {
    const b = await this.#page("/v1/sessions", o);
    const sessions = Array.isArray(b.sessions) ? (b.sessions as Record<string, unknown>[]).map(sessionInfoOf) : [];
    return { sessions, next: typeof b.next === "string" ? b.next : undefined };
  }

  /** Every live session whose owner_id starts with prefix (all pages). */
  async sessionsAll(prefix = ""): Promise<SessionInfo[]> {
    const out: SessionInfo[] = [];
    for (let after: string | undefined; ;) {
      const p = await this.sessions({ prefix, after, limit: 1000 });
      out.push(...p.sessions);
      if (!p.next) return out;
      after = p.next;
    }
  }

  /** Every live lease whose name starts with prefix (all pages), in name order. */
  async listAll(prefix = ""): Promise<LeaseInfo[]> {
    const out: LeaseInfo[] = [];
    for (let after: string | undefined; ;) {
      const p = await this.list({ prefix, after, limit: 1000 });
      out.push(...p.leases);
      if (!p.next) return out;
      after = p.next;
    }
  }

  /**
   * Opens a session (kept), claims names (the claim says what became of
   * each), runs body(session, claim, signal), and ends the session (every
   * lease of it released) when body returns.  signal is aborted as soon as
   * the session is lost (the server said so) or its safe time runs out: it
   * tells an honest body to stop, it is not the safety; read session.held
   * (or a lease's held) right before each write and stamp the write with
   * the lease's token.  Throws the open's or the claim's error (the session
   * is then ended); else, when the session was lost while body ran, "lost"
   * or "expired" (nothing is ended), unless body threw an error of its own
   * other than the abort; else body's error; else an end that answered
   * "lost".
   */
  async holdSession<T>(o: SessionOptions, names: string[], body: HoldSessionBody<T>): Promise<T> {
    const ctl = new AbortController();
    const user = o.onEnd;
    const s = await this.openSession({ ...o, noKeepalive: false, onEnd: (x, reason, err) => {
      ctl.abort(err ?? local(reason, `session ${x.id} ended: ${reason}`));
      user?.(x, reason, err);
    } });
    let claim: Claim = { granted: [], held: [], lockDelay: [] };
    try {
      if (names.length > 0) claim = await s.claim(names);
    } catch (e) {
      await s.close().catch(() => undefined); // the claim's error is the one to tell
      throw e;
    }
    let value: T | undefined;
    let berr: unknown;
    let failed = false;
    try {
      value = await body(s, claim, ctl.signal);
    } catch (e) {
      berr = e;
      failed = true;
    }
    const end = s.error; // one reading: the safe time may run out between two
    if (end?.code === "ended") {
      if (failed) throw berr; // body ended it itself
      return value as T;
    }
    if (end) {
      if (failed && !(ctl.signal.aborted && (isAbort(berr) || berr === ctl.signal.reason))) throw berr;
      throw end;
    }
    let eerr: unknown;
    try {
      await s.end();
    } catch (e) {
      eerr = e;
    }
    if (failed) throw berr;
    if (eerr instanceof TenureError && eerr.is("lost")) throw eerr;
    return value as T;
  }

  /**
   * Acquires name, runs body(lease, signal) while a keepalive renews the
   * lease, and releases it when body returns.  signal is aborted as soon as
   * the lease is lost (the server said so) or its safe time runs out: it
   * tells an honest body to stop, it is not the safety; read lease.held
   * right before each write and stamp the write with lease.token for the
   * sink's fence.  Throws the acquire's error; else, when the lease was lost
   * while body ran, "lost" or "expired" (nothing is released), unless body
   * threw an error of its own other than the abort; else body's error; else
   * a release that answered "lost".
   */
  async hold<T>(name: string, o: AcquireOptions, body: HoldBody<T>): Promise<T> {
    const l = await this.acquire(name, o);
    const ctl = new AbortController();
    const k = new Keeper(l, ctl);
    let value: T | undefined;
    let berr: unknown;
    let failed = false;
    try {
      value = await body(l, ctl.signal);
    } catch (e) {
      berr = e;
      failed = true;
    } finally {
      k.stop();
    }
    const end = l.error; // one reading: the safe time may run out between two
    if (end?.code === "released") {
      if (failed) throw berr;
      return value as T;
    }
    if (end) {
      if (failed && !(ctl.signal.aborted && isAbort(berr))) throw berr;
      throw end;
    }
    let rerr: TenureError | undefined;
    try {
      await l.release();
    } catch (e) {
      rerr = e as TenureError;
    }
    if (failed) throw berr;
    if (rerr instanceof TenureError && rerr.is("lost")) throw rerr;
    return value as T;
  }
}

function isAbort(e: unknown): boolean {
  return e instanceof Error && (e.name === "AbortError" || e.name === "TimeoutError");
}

/**
 * The keepalive of one lease: renews when a third of the TTL has passed
 * since the last successful renew was sent, retries with backoff (TTL/30
 * doubling up to TTL/6) while safe time is left, bounds every renew by the
 * safe deadline, and aborts the body's signal when the lease ends.
 */
class Keeper {
  #l: Lease;
  #ctl: AbortController;
  #timer?: NodeJS.Timeout;
  #stopped = false;
  #backoff = 0;
  #next: number;

  constructor(l: Lease, ctl: AbortController) {
    this.#l = l;
    this.#ctl = ctl;
    this.#next = l.sentAt + l.ttlMs / 3;
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #arm(): void {
    if (this.#stopped) return;
    if (this.#l.error) {
      this.#ctl.abort(this.#l.error);
      return;
    }
    const at = Math.min(this.#next, this.#l.deadline);
    this.#timer = setTimeout(() => void this.#tick(), Math.max(0, at - now()));
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    if (now() >= this.#next) {
      try {
        await this.#l.renew(0, this.#l.deadline);
        this.#backoff = 0;
        this.#next = this.#l.sentAt + this.#l.ttlMs / 3;
      } catch {
        const ttl = this.#l.ttlMs;
        const first = Math.max(10, ttl / 30);
        this.#backoff = this.#backoff ? Math.min(Math.max(first, ttl / 6), 2 * this.#backoff) : first;
        this.#next = now() + this.#backoff;
      }
    }
    this.#arm();
  }
}
