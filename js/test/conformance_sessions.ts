// SPDX-License-Identifier: MIT
// The session steps of the shared client scenarios (tests/conformance,
// README "Sessions"), each through the package's public API: a part of the
// runner of conformance.ts, which owns the lease labels and the namespace.

import { Client, Lease, Session, SessionOptions, TenureError } from "../src";
import { sleep } from "./util";

type Obj = Record<string, unknown>;

/** What the runner gives the session steps. */
export interface Host {
  client: Client;
  namespace(): string;
  real(sym: string): string;
  int(step: Obj, key: string, dflt?: number): number;
  label(as: string, l: Lease): void;
  lease(label: string): Lease | undefined;
}

/** What a session's keepalive reported (session_wait_end). */
interface Ends {
  reason: string | null;
  calls: number;
  leaseCalls: number;
  leasesBefore: number;
}

export class SessionSteps {
  sessions = new Map<string, Session>();
  ends = new Map<string, Ends>();

  constructor(readonly r: Host) {}

  clear(): void {
    this.sessions.clear();
    this.ends.clear();
  }

  ownerReal(sym?: string): string {
    return this.r.namespace() + (sym ?? "");
  }

  /** A real owner_id relative to the namespace, or undefined when outside it. */
  ownerRel(real: unknown): string | undefined {
    const ns = this.r.namespace();
    return typeof real === "string" && real.startsWith(ns) ? real.slice(ns.length) : undefined;
  }

  /** A session event of this scenario's namespace, owner relative; undefined for another run's. */
  sessionEvent(ev: Obj): Obj | undefined {
    const rel = this.ownerRel(ev.owner_id);
    return rel === undefined ? undefined : { ...ev, owner_id: rel };
  }

  static listened(e: Ends, ttlMs: number): SessionOptions {
    return {
      ttlMs, noKeepalive: true,
      onLeaseEnd: () => { e.leaseCalls++; },
      onEnd: (_s, why) => {
        e.reason = why;
        e.calls++;
        e.leasesBefore = e.leaseCalls;
      },
    };
  }

  /** The result of a session step, or undefined when op is not one. */
  async step(op: string, st: Obj): Promise<Obj | undefined> {
    const str = (k: string) => (typeof st[k] === "string" ? (st[k] as string) : undefined);
    const s = this.sessions.get(str("session") ?? "")!;
    const c = this.r.client;
    switch (op) {
      case "session_open": {
        const e: Ends = { reason: null, calls: 0, leaseCalls: 0, leasesBefore: 0 };
        const x = await c.openSession({ ...SessionSteps.listened(e, this.r.int(st, "ttl_ms")), owner: this.ownerReal(str("owner")) });
        this.sessions.set(str("as")!, x);
        this.ends.set(str("as")!, e);
        return { ok: true, session_id: x.id, owner_id: this.ownerRel(x.ownerId), ttl_ms: x.ttlMs, safe_for_ms: x.safeForMs };
      }
      case "session_adopt": {
        const e: Ends = { reason: null, calls: 0, leaseCalls: 0, leasesBefore: 0 };
        this.sessions.set(str("as")!, c.adoptSession(s.id, str("secret")!, { ...SessionSteps.listened(e, 0), owner: s.ownerId }));
        this.ends.set(str("as")!, e);
        return { ok: true };
      }
      case "session_renew":
        await s.renew(this.r.int(st, "ttl_ms"));
        return { ok: true, safe_for_ms: s.safeForMs };
      case "session_end":
        await s.end();
        return { ok: true };
      case "session_force_end":
        await c.forceEndSession(s.id);
        return { ok: true };
      case "session_safe":
        return { safe_for_ms: s.safeForMs };
      case "session_get":
        try {
          const i = await c.getSession(s.id);
          return { found: true, owner_id: this.ownerRel(i.ownerId), ttl_ms: i.ttlMs, leases: i.leases };
        } catch (e) {
          if (e instanceof TenureError && e.code === "not_found") return { found: false };
          throw e;
        }
      case "session_list": {
        const owners = (await c.sessionsAll(this.ownerReal(str("prefix")))).map((i) => this.ownerRel(i.ownerId) ?? "").sort();
        return { count: owners.length, owners };
      }
      case "claim":
        return this.claim(s, st);
      case "release_many": {
        const res = await s.release((st.leases as string[]).map((x) => this.r.lease(x)!));
        const rel = (ls: Lease[]) => ls.map((l) => l.name.slice(this.r.namespace().length)).sort();
        return { ok: true, released: rel(res.released), lost: rel(res.lost) };
      }
      case "session_keepalive":
        s.keepAlive();
        return { ok: true };
      case "session_wait_end": {
        const e = this.ends.get(str("session")!)!;
        const end = Date.now() + this.r.int(st, "timeout_ms", 5000);
        while (e.calls === 0 && Date.now() < end) await sleep(10);
        await sleep(300); // a second report would be counted
        return { reason: e.reason, calls: e.calls, lease_calls: e.leaseCalls, leases_before: e.leasesBefore };
      }
      default:
        return undefined;
    }
  }

  async claim(s: Session, st: Obj): Promise<Obj> {
    const sym = new Map<string, string>();
    for (const n of st.names as string[]) sym.set(this.r.real(n), n);
    const res = await s.claim([...sym.keys()], { owner: typeof st.owner === "string" ? st.owner : undefined,
      lockDelayMs: this.r.int(st, "lock_delay_ms") });
    const as = typeof st.as === "string" ? st.as : "";
    const granted: Obj = {};
    const held: Obj = {};
    const delayed: Obj = {};
    for (const l of res.granted) {
      this.r.label(as + sym.get(l.name)!, l);
      granted[sym.get(l.name)!] = { token: l.token };
    }
    for (const h of res.held) {
      held[sym.get(h.name)!] = { holder: h.holder ? { owner_id: h.holder.ownerId, token: h.holder.token } : null };
    }
    for (const d of res.lockDelay) delayed[sym.get(d.name)!] = { retry_after_ms: d.retryAfterMs };
    return { granted, held, lock_delay: delayed };
  }

  /** The acquire step under a session. */
  async acquire(st: Obj): Promise<Obj> {
    const str = (k: string) => (typeof st[k] === "string" ? (st[k] as string) : undefined);
    const l = await this.sessions.get(str("session")!)!.acquire(this.r.real(str("name")!), { owner: str("owner"),
      waitMs: this.r.int(st, "wait_ms"), requestId: str("request_id"), lockDelayMs: this.r.int(st, "lock_delay_ms") });
    if (str("as")) this.r.label(str("as")!, l);
    return { ok: true, token: l.token, owner_id: l.ownerId, ttl_ms: l.ttlMs, safe_for_ms: l.safeForMs };
  }
}
