// SPDX-License-Identifier: MIT
// A session: one heartbeat for many leases (docs/SESSIONS.md).  Each lease
// taken under it keeps its own token, secret and fence; its liveness is the
// session's, so one renew keeps them all, and its safe time is the
// session's: the time left of the last successful open or renew, counted
// from that request's sending, minus the safety margin.

import { LeaseInfo, TenureError, infoOf, local } from "./errors";
import { Transport, checkName, drawId, now } from "./http";
import { Lease, errorOf } from "./lease";

export interface SessionAcquireOptions {
  owner?: string;
  waitMs?: number;
  requestId?: string;
  lockDelayMs?: number;
}

/** The answer of a batch claim: every name decided on its own. */
export interface Claim {
  granted: Lease[];
  held: { name: string; holder?: LeaseInfo }[];
  lockDelay: { name: string; retryAfterMs: number }[];
}

export class Session {
  readonly id: string;
  readonly ownerId: string;
  readonly #secret: string;
  readonly #t: Transport;
  readonly #margin: (ttl: number) => number;
  ttlMs = 0;
  #sent = 0;
  #deadline = 0;
  #ended = false;
  #endErr?: TenureError;
  #timer?: NodeJS.Timeout;
  #backoff = 0;

  private constructor(t: Transport, margin: (ttl: number) => number, id: string, secret: string, owner: string) {
    this.#t = t;
    this.#margin = margin;
    this.id = id;
    this.#secret = secret;
    this.ownerId = owner;
  }

  /** @internal */
  static async open(t: Transport, margin: (ttl: number) => number, owner: string, ttlMs: number): Promise<Session> {
    if (!(ttlMs >= 1)) throw local("invalid", "the TTL must be at least 1 ms");
    const a = await t.call("POST", "/v1/sessions", { owner_id: owner, ttl_ms: ttlMs });
    if (a.status !== 201 && a.status !== 200) throw errorOf(a);
    const b = a.body;
    if (typeof b.session_id !== "string" || typeof b.session_secret !== "string" || typeof b.expires_in_ms !== "number") {
      throw local("protocol", "session without session_id, session_secret or expires_in_ms");
    }
    const s = new Session(t, margin, b.session_id, b.session_secret, owner);
    s.#grant(a.sent, typeof b.ttl_ms === "number" ? b.ttl_ms : ttlMs, b.expires_in_ms);
    return s;
  }

  /** The credential of the session.  Never log it. */
  get secret(): string {
    return this.#secret;
  }

  #grant(sent: number, ttl: number, expiresInMs: number): void {
    if (this.#ended || (this.#sent && sent < this.#sent)) return;
    this.ttlMs = ttl;
    this.#sent = sent;
    this.#deadline = sent + expiresInMs - this.#margin(ttl);
  }

  /** @internal */
  safeForAt(t: number): number {
    if (this.#ended) return 0;
    const left = this.#deadline - t;
    if (left <= 0) {
      this.#end(local("expired", `the safe time of session ${this.id} ran out`));
      return 0;
    }
    return left;
  }

  /** @internal */
  endError(): TenureError | undefined {
    return this.#endErr;
  }

  #end(why: TenureError): void {
    if (!this.#ended) {
      this.#ended = true;
      this.#endErr = why;
      clearTimeout(this.#timer);
    }
  }

  /** The session's safe time in ms, as a lease's: 0 once it ended, for good. */
  get safeForMs(): number {
    return Math.floor(this.safeForAt(now()));
  }

  get held(): boolean {
    return this.safeForAt(now()) > 0;
  }

  #path(suffix = ""): string {
    return `/v1/sessions/${encodeURIComponent(this.id)}${suffix}`;
  }

  /** One renew for every lease of the session; "lost" once the session ended on the server (never revived). */
  async renew(ttlMs = 0, deadline = 0): Promise<void> {
    if (this.safeForAt(now()) <= 0) throw this.#endErr!;
    const a = await this.#t.call("PATCH", this.#path(),
      { session_secret: this.#secret, ...(ttlMs > 0 ? { ttl_ms: ttlMs } : {}) }, 0, deadline);
    if (a.status !== 200) {
      const e = errorOf(a);
      if (e.is("lost") || e.is("forbidden")) this.#end(e);
      throw e;
    }
    if (typeof a.body.expires_in_ms !== "number") throw local("protocol", "session renew answer without expires_in_ms");
    this.#grant(a.sent, typeof a.body.ttl_ms === "number" ? a.body.ttl_ms : ttlMs > 0 ? ttlMs : this.ttlMs, a.body.expires_in_ms);
    if (this.safeForAt(now()) <= 0) throw this.#endErr!;
  }

  /** Takes one name under the session (no TTL of its own). */
  async acquire(name: string, o: SessionAcquireOptions = {}): Promise<Lease> {
    checkName(name);
    if (this.safeForAt(now()) <= 0) throw this.#endErr!;
    const owner = o.owner ?? this.ownerId;
    const body: Record<string, unknown> = { name, owner_id: owner, session_id: this.id, session_secret: this.#secret,
      request_id: o.requestId ?? drawId() };
    if (o.waitMs) body.wait_ms = o.waitMs;
    if (o.lockDelayMs) body.lock_delay_ms = o.lockDelayMs;
    const a = await this.#t.call("POST", "/v1/leases", body, o.waitMs ?? 0);
    return Lease.granted(this.#t, this.#margin, name, owner, 0, a, this);
  }

  /** Claims many names in one durable batch. */
  async claim(names: string[]): Promise<Claim> {
    names.forEach(checkName);
    if (this.safeForAt(now()) <= 0) throw this.#endErr!;
    const a = await this.#t.call("POST", this.#path("/leases"), { session_secret: this.#secret, names });
    if (a.status !== 200) throw errorOf(a);
    const list = (k: string) => (Array.isArray(a.body[k]) ? (a.body[k] as Record<string, unknown>[]) : []);
    return {
      granted: list("granted").map((g) => Lease.granted(this.#t, this.#margin, String(g.name), this.ownerId, 0,
        { status: 200, body: { owner_id: this.ownerId, ...g }, sent: a.sent }, this)),
      held: list("held").map((h) => ({ name: String(h.name),
        holder: h.holder && typeof h.holder === "object" ? infoOf(h.holder as Record<string, unknown>) : undefined })),
      lockDelay: list("lock_delay").map((d) => ({ name: String(d.name),
        retryAfterMs: typeof d.retry_after_ms === "number" ? d.retry_after_ms : 0 })),
    };
  }

  /** Releases several leases of this session in one request; returns the names that were no longer live. */
  async releaseAll(leases: Lease[]): Promise<string[]> {
    for (const l of leases) l.lose(local("released", `lease "${l.name}" was released`));
    const a = await this.#t.call("DELETE", this.#path("/leases"),
      { session_secret: this.#secret, leases: leases.map((l) => ({ name: l.name, token: l.token })) });
    if (a.status !== 200) throw errorOf(a);
    return (Array.isArray(a.body.lost) ? (a.body.lost as Record<string, unknown>[]) : []).map((x) => String(x.name));
  }

  /**
   * Renews the session when a third of its TTL has passed since the last
   * successful renew was sent, retrying with backoff while safe time is
   * left, until it ends or close() is called (timers only: it keeps no
   * process alive by itself).
   */
  keepAlive(): void {
    if (this.#timer || this.#ended) return;
    const next = this.#backoff ? now() + this.#backoff : this.#sent + this.ttlMs / 3;
    this.#timer = setTimeout(() => void this.#tick(), Math.max(0, next - now()));
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    try {
      await this.renew(0, this.#deadline);
      this.#backoff = 0;
    } catch {
      if (!this.held) return;
      this.#backoff = Math.min(Math.max(this.ttlMs / 6, 10), this.#backoff ? 2 * this.#backoff : Math.max(10, this.ttlMs / 30));
    }
    if (!this.#ended) this.keepAlive();
  }

  /** Ends the session on the server: it and every lease of it end now (released). */
  async close(): Promise<void> {
    this.#end(local("released", `session ${this.id} was closed`));
    const a = await this.#t.call("DELETE", this.#path(), { session_secret: this.#secret });
    if (a.status !== 200 && a.status !== 204) throw errorOf(a);
  }
}
