// SPDX-License-Identifier: MIT
// The shared client scenarios (tests/conformance/*.json, language in its
// README.md) through the TypeScript client: node conformance.js URL FILE...
// runs each scenario against a live tenured and exits 0 when all pass.
// Every step goes through the package's public API, events and force
// release included.

import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { Client, EventStream, Lease, TenureError } from "../src";
import { SessionSteps } from "./conformance_sessions";

type Obj = Record<string, unknown>;

class Runner {
  readonly prefix = `conf-js-${process.pid}-${Date.now() % 1_000_000_000}/`;
  readonly client: Client;
  scenario = "";
  vars = new Map<string, unknown>();
  slots = new Map<string, Lease>();
  stream?: EventStream;
  got: Obj[] = [];
  why = "";
  needs: string[] = [];
  skipped?: string;
  readonly sessions: SessionSteps;

  constructor(url: string) {
    this.client = new Client({ urls: [url], ownerId: "conformance-js" });
    this.sessions = new SessionSteps(this);
  }

  /** The scenario's namespace: every symbolic name and session owner lives under it. */
  namespace(): string {
    return `${this.prefix}${this.scenario}/`;
  }

  real(sym: string): string {
    return this.namespace() + sym;
  }

  label(as: string, l: Lease): void {
    this.slots.set(as, l);
  }

  lease(label: string): Lease | undefined {
    return this.slots.get(label);
  }

  match(exp: unknown, act: unknown, path: string): boolean {
    if (typeof exp === "string" && exp.startsWith("$")) {
      const ref = exp.slice(1);
      if (!this.vars.has(ref)) {
        if (act === undefined || act === null) {
          this.why = `${path}: nothing to bind ${exp}`;
          return false;
        }
        this.vars.set(ref, act);
        return true;
      }
      exp = this.vars.get(ref);
    }
    if (exp && typeof exp === "object" && !Array.isArray(exp) && Object.keys(exp).length === 1) {
      const e = exp as Obj;
      if ("gt" in e) {
        const lo = typeof e.gt === "string" ? this.vars.get(e.gt.slice(1)) : e.gt;
        if (typeof act !== "number" || typeof lo !== "number" || act <= lo) {
          this.why = `${path}: expected > ${String(lo)}, got ${String(act)}`;
          return false;
        }
        return true;
      }
      if (Array.isArray(e.range)) {
        const [lo, hi] = e.range as number[];
        if (typeof act !== "number" || !Number.isInteger(act) || act < lo || act > hi) {
          this.why = `${path}: expected in [${lo}, ${hi}], got ${String(act)}`;
          return false;
        }
        return true;
      }
    }
    if (exp && typeof exp === "object" && !Array.isArray(exp)) {
      if (!act || typeof act !== "object") {
        this.why = `${path}: expected an object, got ${JSON.stringify(act)}`;
        return false;
      }
      const a = act as Obj;
      for (const [k, v] of Object.entries(exp as Obj)) {
        const sub = `${path}.${k}`;
        if (!(k in a) && v !== null) {
          this.why = `${sub}: missing`;
          return false;
        }
        if (k === "name" && typeof v === "string") {
          if (a.name !== this.real(v)) {
            this.why = `${sub}: expected ${this.real(v)}, got ${String(a.name)}`;
            return false;
          }
          continue;
        }
        if (!this.match(v, a[k] ?? null, sub)) return false;
      }
      return true;
    }
    if (!isDeepStrictEqual(exp, act)) {
      this.why = `${path}: expected ${JSON.stringify(exp)}, got ${JSON.stringify(act)}`;
      return false;
    }
    return true;
  }

  int(step: Obj, key: string, dflt = 0): number {
    let v = step[key];
    if (typeof v === "string" && v.startsWith("$")) v = this.vars.get(v.slice(1));
    return typeof v === "number" ? v : dflt;
  }

  static err(e: unknown): Obj {
    if (!(e instanceof TenureError)) throw e;
    if (e.code === "held") {
      const h = e.holder;
      return { error: "held", holder: h ? { owner_id: h.ownerId, token: h.token, expires_in_ms: h.expiresInMs } : null };
    }
    if (e.code === "lock_delay") return { error: "lock_delay", retry_after_ms: e.retryAfterMs };
    return { error: e.code };
  }

  async op(step: Obj, op: string): Promise<Obj> {
    const s = (k: string) => (typeof step[k] === "string" ? (step[k] as string) : undefined);
    const c = this.client;
    try {
      const res = await this.sessions.step(op, step);
      if (res) return res;
      switch (op) {
        case "acquire": {
          if ("session" in step) return await this.sessions.acquire(step);
          const l = await c.acquire(this.real(s("name")!), { ttlMs: this.int(step, "ttl_ms"), owner: s("owner"),
            waitMs: this.int(step, "wait_ms"), requestId: s("request_id"), lockDelayMs: this.int(step, "lock_delay_ms") });
          if (s("as")) this.slots.set(s("as")!, l);
          return { ok: true, token: l.token, owner_id: l.ownerId, ttl_ms: l.ttlMs, safe_for_ms: l.safeForMs };
        }
        case "adopt":
          this.slots.set(s("as")!, c.adopt(this.real(s("name")!), this.int(step, "token"), s("secret")!));
          return { ok: true };
        case "renew": case "release": case "safe": {
          const l = this.slots.get(s("lease")!);
          if (!l) return { error: "no such lease label" };
          if (op === "safe") return { safe_for_ms: l.safeForMs };
          if (op === "renew") {
            await l.renew(this.int(step, "ttl_ms"));
            return { ok: true, safe_for_ms: l.safeForMs };
          }
          await l.release();
          return { ok: true };
        }
        case "check": {
          const r = await c.check(this.real(s("name")!), this.int(step, "token"));
          return { current: r.current, token: r.token, floor: r.floor };
        }
        case "get":
          try {
            const i = await c.get(this.real(s("name")!));
            return { found: true, owner_id: i.ownerId, token: i.token };
          } catch (e) {
            if (e instanceof TenureError && e.code === "not_found") return { found: false };
            throw e;
          }
        case "force_release":
          await c.forceRelease(this.real(s("name")!));
          return { ok: true };
        case "events_open":
          return await this.eventsOpen();
        default:
          return { error: `unknown op ${op}` };
      }
    } catch (e) {
      return Runner.err(e);
    }
  }

  async eventsOpen(): Promise<Obj> {
    this.stream?.close();
    this.got = [];
    const st = this.client.events(`${this.prefix}${this.scenario}/`);
    this.stream = st;
    void (async () => {
      try {
        for await (const e of st) {
          // session events are every session's: this run's only, owner relative
          const d = e.sessionId !== undefined ? this.sessions.sessionEvent(e.data) : e.data;
          if (d) this.got.push(d);
        }
      } catch {
        // the stream ended: events_expect reports what came
      }
    })();
    const ok = await Promise.race([st.subscribed.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]);
    return ok ? { ok: true } : { error: "not subscribed" };
  }

  async eventsExpect(step: Obj): Promise<boolean> {
    if (!this.stream) {
      this.why = "events_expect: no stream";
      return false;
    }
    const want = step.events as unknown[];
    const end = Date.now() + this.int(step, "timeout_ms", 5000);
    while (this.got.length < want.length && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    const have = [...this.got];
    if (have.length < want.length) {
      this.why = `events: ${have.length} of ${want.length} came: ${JSON.stringify(have)}`;
      return false;
    }
    return want.every((w, k) => this.match(w, have[k], `events[${k}]`));
  }

  async step(step: Obj, k: number): Promise<boolean> {
    const op = step.do;
    if (typeof op !== "string") {
      this.why = `step ${k}: no "do"`;
      return false;
    }
    if (op === "sleep") {
      await new Promise((r) => setTimeout(r, this.int(step, "ms")));
      return true;
    }
    if (op === "events_expect") return this.eventsExpect(step);
    const res = await this.op(step, op);
    const path = `step ${k} (${op})`;
    if (this.needs.length > 0 && res.error === "not_implemented") {
      this.skipped = `${path}: the server has no ${this.needs.join(", ")} (not_implemented)`;
      return false;
    }
    if ("expect" in step) return this.match(step.expect, res, path);
    if ("error" in res) {
      this.why = `${path}: failed: ${String(res.error)}`;
      return false;
    }
    return true;
  }

  async file(path: string): Promise<boolean> {
    const doc = JSON.parse(readFileSync(path, "utf8")) as Obj;
    this.scenario = typeof doc.scenario === "string" ? doc.scenario : "unnamed";
    const steps = Array.isArray(doc.steps) ? (doc.steps as Obj[]) : [];
    this.needs = Array.isArray(doc.needs) ? doc.needs.map(String) : [];
    this.skipped = undefined;
    let ok = steps.length > 0;
    this.why = ok ? "" : "no steps";
    for (let k = 0; ok && k < steps.length; k++) ok = await this.step(steps[k], k);
    if (this.skipped !== undefined) {
      ok = true;
      console.log(`skip - ${this.scenario} (TypeScript client): ${this.skipped}`);
    } else if (ok) console.log(`ok - ${this.scenario} (TypeScript client)`);
    else console.error(`FAIL ${this.scenario} (TypeScript client): ${this.why}`);
    this.stream?.close();
    this.stream = undefined;
    this.sessions.clear();
    this.slots.clear();
    this.vars.clear();
    return ok;
  }
}

async function main(): Promise<void> {
  const [url, ...files] = process.argv.slice(2);
  if (!url || files.length === 0) {
    console.error("usage: node conformance.js URL SCENARIO.json...");
    process.exit(2);
  }
  const r = new Runner(url);
  let failed = 0;
  let skipped = 0;
  for (const f of files) {
    if (!(await r.file(f))) failed++;
    else if (r.skipped !== undefined) skipped++;
  }
  console.log(`${files.length - failed - skipped} passed, ${skipped} skipped, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

void main();
