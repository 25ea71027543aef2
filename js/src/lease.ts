// SPDX-License-Identifier: MIT
// A lease held by this process: its safe time (the time left of the last
// successful acquire or renew, counted on the monotonic clock from the
// instant that request was sent, minus the safety margin), its renew and
// release.  A lease that was lost, released or ran out is never revived.
// A lease under a session lives by its session: its safe time is the
// session's, it ends when the session ends, and it is renewed only through
// the session.

import { TenureError, fromAnswer, local } from "./errors";
import { Answer, TOKEN_MAX, Transport, leasePath, now } from "./http";
import type { Session } from "./session";

type State = "held" | "lost" | "expired" | "released";

export class Lease {
  readonly name: string;
  /** The holder's owner id ("" for an adopted handle). */
  readonly ownerId: string;
  /** The fencing token: strictly increasing per grant, never reused; public, never a credential. */
  readonly token: number;
  /** The server's signature of (name, token), or undefined unless the server signs grants. */
  readonly proof?: string;
  /** The session this lease lives by, if any. */
  readonly session?: Session;
  readonly #secret: string;
  readonly #t: Transport;
  readonly #margin: (ttl: number) => number;
  #state: State = "held";
  #ttlMs = 0;
  #sent = 0;
  #deadline = 0;
  #hasDeadline = false;
  #endErr?: TenureError;
  #releaseErr?: TenureError; // what its release answered, when it did not go through

  /** @internal */
  constructor(t: Transport, margin: (ttl: number) => number, name: string, ownerId: string, token: number,
    secret: string, proof?: string, session?: Session) {
    this.#t = t;
    this.#margin = margin;
    this.name = name;
    this.ownerId = ownerId;
    this.token = token;
    this.#secret = secret;
    this.proof = proof;
    this.session = session;
  }

  /** @internal The lease of a grant answer (201, or 200 for a replay). */
  static granted(t: Transport, margin: (ttl: number) => number, name: string, owner: string, ttlMs: number,
    a: Answer, session?: Session): Lease {
    if (a.status !== 200 && a.status !== 201) throw errorOf(a);
    const b = a.body;
    if (typeof b.token !== "number" || !Number.isSafeInteger(b.token) || b.token < 0 || b.token > TOKEN_MAX ||
      typeof b.lease_secret !== "string" || b.lease_secret === "" ||
      (!session && typeof b.expires_in_ms !== "number")) {
      throw local("protocol", "grant without token, lease_secret or expires_in_ms");
    }
    const l = new Lease(t, margin, name, typeof b.owner_id === "string" ? b.owner_id : owner, b.token,
      b.lease_secret, typeof b.proof === "string" ? b.proof : undefined, session);
    if (!session) {
      const ttl = typeof b.ttl_ms === "number" && b.ttl_ms > 0 ? b.ttl_ms : ttlMs;
      l.grant(a.sent, ttl, b.expires_in_ms as number);
    }
    return l;
  }

  /** The credential for renew and release (hex).  Never log it. */
  get secret(): string {
    return this.#secret;
  }

  /** The TTL as last granted (the session's under a session). */
  get ttlMs(): number {
    return this.session ? this.session.ttlMs : this.#ttlMs;
  }

  /** @internal */
  get sentAt(): number {
    return this.#sent;
  }

  /** @internal The end of the safe time (now() when none). */
  get deadline(): number {
    return this.#hasDeadline ? this.#deadline : now();
  }

  /** @internal Folds a successful acquire or renew, sent at sent, into the lease. */
  grant(sent: number, ttl: number, expiresInMs: number): void {
    if (this.#state !== "held") return; // lost, expired or released: never revived
    if (this.#hasDeadline && sent < this.#sent) return; // an older request answered late
    this.#ttlMs = ttl;
    this.#sent = sent;
    this.#deadline = sent + expiresInMs - this.#margin(ttl);
    this.#hasDeadline = true;
  }

  #safeAt(t: number): number {
    if (this.#state !== "held") return 0;
    if (this.session) return Math.max(this.session.safeForAt(t), 0); // its end is the session's (terminal there)
    if (!this.#hasDeadline) return 0;
    const left = this.#deadline - t;
    if (left <= 0) {
      this.#state = "expired";
      return 0;
    }
    return left;
  }

  /**
   * How long no other holder can exist, in ms: 0 once the lease was lost,
   * released or ran out; once 0 it never grows back, even if a late renew
   * answer arrives.  A process resumed from SIGSTOP past its safe time
   * reads 0 at its very next call.
   */
  get safeForMs(): number {
    return Math.floor(this.#safeAt(now()));
  }

  /** Whether it is safe to act as the holder: read it right before each write. */
  get held(): boolean {
    return this.#safeAt(now()) > 0;
  }

  /** undefined while held, else why not: "expired", "lost" (with the server's answer) or "released". */
  get error(): TenureError | undefined {
    this.#safeAt(now());
    if (this.#state === "held" && this.session) return this.session.leaseError();
    switch (this.#state) {
      case "expired":
        return this.#endErr ?? local("expired", `the safe time of lease "${this.name}" ran out`);
      case "lost":
        return this.#endErr ?? local("lost", `lease "${this.name}" was lost`);
      case "released":
        return local("released", `lease "${this.name}" was released`);
      default:
        return undefined;
    }
  }

  /** @internal */
  lose(why: TenureError): void {
    if (this.#state === "held") {
      this.#state = "lost";
      this.#endErr = why;
    }
  }

  /** @internal Marks it released (a batch release); why, when given, is what the release answered. */
  markReleased(why?: TenureError): void {
    if (this.#state === "held") this.#state = "released";
    if (this.#state === "released" && why) this.#releaseErr = why;
  }

  /** @internal undefined while the lease itself was not released, lost or run out (its session's end aside). */
  get ownError(): TenureError | undefined {
    return this.#state === "held" ? undefined : this.error;
  }

  /** @internal How it ended: "released", "lost", "expired", or its session's end; "stopped" while it has not. */
  get endReason(): string {
    this.#safeAt(now());
    if (this.#state !== "held") return this.#state;
    return this.session?.endReason() ?? "stopped";
  }

  /** @internal What its end is reported with: a release's error (undefined when it went through), else error. */
  get endError(): TenureError | undefined {
    return this.#state === "released" ? this.#releaseErr : this.error;
  }
  /**
   * Extends the lease; its safe time then counts from this request's
   * sending.  ttlMs 0 keeps the TTL.  "lost" when the server says the grant
   * is gone (for good), "expired" without sending anything when the safe
   * time already ran out, "forbidden" on a wrong secret (the handle is then
   * lost too), "released" after release; transport errors leave the lease as
   * it was.  A lease under a session is renewed only through its session:
   * its renew is sent, and the server refuses it ("bad_request": "renew the
   * session").
   */
  async renew(ttlMs = 0, deadline = 0): Promise<void> {
    if (!(this.#state === "held" && !this.#hasDeadline && !this.session)) {
      const e = this.error;
      if (e) throw e;
    }
    const a = await this.#t.call("PATCH", leasePath(this.name),
      { token: this.token, lease_secret: this.#secret, ...(ttlMs > 0 ? { ttl_ms: ttlMs } : {}) }, 0, deadline);
    if (a.status !== 200) {
      const e = errorOf(a);
      if (e.is("lost") || e.is("forbidden")) this.lose(e);
      throw e;
    }
    if (typeof a.body.expires_in_ms !== "number") throw local("protocol", "renew answer without expires_in_ms");
    if (this.session) return; // its session's time is its time
    const granted = typeof a.body.ttl_ms === "number" && a.body.ttl_ms > 0 ? a.body.ttl_ms : ttlMs > 0 ? ttlMs : this.#ttlMs;
    this.grant(a.sent, granted, a.body.expires_in_ms);
    if (this.#safeAt(now()) <= 0) {
      throw this.#state === "released" ? this.error!
        : local("expired", `the renew of lease "${this.name}" answered after its safe time ran out`);
    }
  }

  /**
   * @internal Gives a waiting acquire's grant its safe time back: that time
   * counts from the acquire's sending, so the wait used it up; when more
   * than half of it went, one renew restarts the count from its own sending.
   */
  async refreshWaited(): Promise<void> {
    const d = this.#deadline;
    const spent = this.#state === "held" && this.#hasDeadline && 2 * (d - now()) < d - this.#sent;
    if (!spent) return;
    this.#hasDeadline = false; // renewable, never writable meanwhile
    try {
      await this.renew(0);
    } catch {
      // the lease stays as the grant left it (run out, or lost when the server said so)
    }
    if (!this.#hasDeadline) {
      this.#deadline = d;
      this.#hasDeadline = true;
    }
  }

  /**
   * Gives the lease back.  From this call on it is neither held nor
   * renewed, whatever the outcome.  "lost" when it was no longer live.  A
   * lease under a session leaves it (reported ended, "released"); the
   * session goes on.
   */
  async release(): Promise<void> {
    this.#state = "released";
    let err: TenureError | undefined;
    try {
      const a = await this.#t.call("DELETE", leasePath(this.name), { token: this.token, lease_secret: this.#secret });
      if (a.status !== 200 && a.status !== 204) err = errorOf(a);
    } catch (e) {
      if (!(e instanceof TenureError)) throw e;
      err = e;
    }
    if (this.session) {
      this.markReleased(err);
      this.session.leaseEnded(this);
    }
    if (err) throw err;
  }

  /** Describes the lease without its secret. */
  toString(): string {
    return `Lease(name="${this.name}", token=${this.token}, owner="${this.ownerId}")`;
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, token: this.token, owner_id: this.ownerId };
  }
}


export function errorOf(a: Answer): TenureError {
  return fromAnswer(a.status, a.body, a.retryAfterMs ?? 0, a.host ?? "");
}
