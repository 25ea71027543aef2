// SPDX-License-Identifier: MIT
// Sessions of the TypeScript client against a real tenured (and a proxy of
// the test's own in front of it), and what tenured refuses besides leases
// (issue #36's checks, a server without sessions) as clear errors.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { after, before, test } from "node:test";
import { Client, Lease, Session, SessionOptions, TenureError } from "../src";
import { Proxy } from "./proxy";
import { TestServer } from "./server";
import { code, sleep, untilAborted } from "./util";

let srv: TestServer;
let c: Client;

before(async () => {
  srv = await TestServer.start();
  c = new Client({ urls: [srv.url], ownerId: "js-session-test" });
});
after(() => srv.stop());

/** Every end a session's listeners heard, in order: "lease NAME reason" and "session reason". */
class Heard {
  log: string[] = [];
  on(o: SessionOptions): SessionOptions {
    return { ...o, onLeaseEnd: (l, why) => this.log.push(`lease ${l.name} ${why}`),
      onEnd: (_s, why) => this.log.push(`session ${why}`) };
  }

  /** How many times each lease was reported, and with what. */
  leases(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    for (const s of this.log) {
      const [kind, name, why] = s.split(" ");
      if (kind === "lease") m.set(name, [...(m.get(name) ?? []), why]);
    }
    return m;
  }

  async ended(ms: number): Promise<boolean> {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) {
      if (this.log.some((s) => s.startsWith("session "))) return true;
    }
    return false;
  }
}

const names = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, k) => `${prefix}/${String(k).padStart(4, "0")}`);

test("the keepalive keeps every lease, and end() releases each once", async () => {
  const h = new Heard();
  const s = await c.openSession(h.on({ ttlMs: 900 }));
  const all = names("js-s/keep", 300); // two batches of the client
  const claim = await s.claim(all);
  assert.equal(claim.granted.length, 300);
  assert.equal(claim.held.length + claim.lockDelay.length, 0);
  await sleep(2500); // past two TTLs: only the keepalive keeps them
  for (const l of claim.granted) assert.ok(l.held, l.toString());
  assert.equal((await c.check(all[299], claim.granted[299].token)).current, true);
  // claiming again what the session holds answers the same grants, the same handles
  const again = await s.claim(all.slice(0, 3));
  for (let k = 0; k < 3; k++) assert.equal(again.granted[k], claim.granted[k]);
  const r = await s.release(claim.granted.slice(0, 10));
  assert.equal(r.released.length, 10);
  assert.equal(r.lost.length, 0);
  assert.equal(claim.granted[0].held, false);
  assert.equal(s.leases().size, 290);
  assert.equal(h.leases().size, 10);
  await s.end();
  assert.equal(claim.granted[100].safeForMs, 0);
  assert.equal(claim.granted[100].error?.code, "released");
  assert.equal((await c.check(all[100], claim.granted[100].token)).current, false);
  assert.equal(h.log.length, 301, "every lease once, then the session");
  assert.equal(h.log[300], "session released");
  for (const why of h.leases().values()) assert.deepEqual(why, ["released"]);
  assert.equal(await code(s.renew()), "ended");
  assert.equal(await code(s.end()), "ended");
});

test("a lost session reports every lease lost once, then itself", async () => {
  const h = new Heard();
  const s = await c.openSession(h.on({ ttlMs: 1500 }));
  const claim = await s.claim(names("js-s/lost", 5));
  const one = await s.acquire("js-s/lost/one");
  await c.forceEndSession(s.id);
  assert.ok(await h.ended(5000), "the keepalive did not report the loss");
  await sleep(700); // past another renew: a second report would show
  assert.equal(h.log.length, 7, h.log.join(", "));
  assert.equal(h.log[6], "session lost");
  assert.equal(h.leases().size, 6);
  for (const why of h.leases().values()) assert.deepEqual(why, ["lost"]);
  assert.equal(one.held, false);
  assert.equal(claim.granted[4].held, false);
  assert.ok(one.error?.is("lost"));
  assert.ok(s.error?.is("lost"));
  assert.equal(await code(s.end()), "lost");
  assert.equal(h.log.length, 7, `end() of a lost session reported again: ${h.log.join(", ")}`);
});

// The safe time counts from the sending of the open or renew, not from its
// answer: with every answer held back 1.5 s, a 6 s session minus its
// margin (600 ms) has at most 3.9 s left when the answer comes.
test("safe time counts from the sending of the last acknowledged renew", async () => {
  const p = await Proxy.start(srv.url);
  try {
    const slow = new Client({ urls: [p.url], requestTimeoutMs: 10_000 });
    p.delayMs = 1500;
    const s = await slow.openSession({ ttlMs: 6000, noKeepalive: true });
    let left = s.safeForMs;
    assert.ok(left > 0 && left <= 3900, `safe time after a slow open: ${left}`);
    const l = await s.acquire("js-s/slow");
    assert.ok(l.safeForMs <= 3900 - 1500, `the lease's is the session's: ${l.safeForMs}`);
    await s.renew();
    left = s.safeForMs;
    assert.ok(left > 0 && left <= 3900, `safe time after a slow renew: ${left}`);
    p.delayMs = 0;
    await s.end();
  } finally {
    p.close();
  }
});

// A claim whose success was hidden behind a 503 (the client moved on to the
// next URL and sent it again) answers the same grants: nothing is "held" by
// the session itself.
test("a claim sent again after a 503 answers the same grants", async () => {
  const p = await Proxy.start(srv.url);
  try {
    const two = new Client({ urls: [p.url, srv.url] });
    const s = await two.openSession({ ttlMs: 5000 });
    p.hideOnce((x) => x.method === "POST" && x.path.endsWith("/leases"));
    const claim = await s.claim(names("js-s/failover", 4));
    assert.equal(claim.granted.length, 4, `held: ${JSON.stringify(claim.held)}`);
    assert.equal(claim.held.length, 0);
    assert.equal(p.seen.filter((x) => x.path.endsWith("/leases")).length, 1, "the first claim did not go through the proxy");
    for (const l of claim.granted) assert.equal((await c.check(l.name, l.token)).current, true, l.toString());
    await s.end();
  } finally {
    p.close();
  }
});

test("holdSession aborts its body's signal when the session is lost", async () => {
  const start = Date.now();
  let aborted = false;
  const got = await code(c.holdSession({ ttlMs: 1500 }, names("js-s/hold-lost", 3), async (s, claim, signal) => {
    assert.equal(claim.granted.length, 3);
    await c.forceEndSession(s.id);
    await untilAborted(signal, () => { aborted = true; });
  }));
  assert.equal(got, "lost");
  assert.ok(aborted, "the body's signal was not aborted");
  assert.ok(Date.now() - start < 10_000, "the body ran on after the loss");
});

test("holdSession keeps its leases and ends the session", async () => {
  const tokens = new Map<string, number>();
  const id = await c.holdSession({ ttlMs: 600 }, names("js-s/hold-kept", 3), async (s, claim) => {
    await sleep(1500); // past two TTLs
    for (const l of claim.granted) {
      assert.ok(l.held);
      tokens.set(l.name, l.token);
    }
    return s.id;
  });
  assert.equal(tokens.size, 3);
  for (const [n, t] of tokens) assert.equal((await c.check(n, t)).current, false);
  assert.equal(await code(c.getSession(id)), "not_found");
});

test("an adopted session has no safe time until renewed", async () => {
  const s = await c.openSession({ ttlMs: 5000, noKeepalive: true, owner: "js-s-adopt" });
  const a: Session = c.adoptSession(s.id, s.secret);
  assert.equal(a.safeForMs, 0);
  assert.equal(a.error, undefined);
  await a.renew();
  assert.ok(a.safeForMs > 0);
  const l: Lease = (await a.claim(["js-s/adopted"])).granted[0];
  assert.ok(l.held);
  assert.equal((await c.getSession(s.id)).leases, 1);
  await s.end();
  assert.equal((await c.check("js-s/adopted", l.token)).current, false);
  assert.equal((await c.sessionsAll("js-s-adopt")).length, 0);
});

// Node's fetch adds headers of its own (sec-fetch-mode, accept-language):
// none of them may be an Origin, which tenured refuses on POST, PATCH and
// DELETE (403) as a web page's.
test("no request carries an Origin", async () => {
  const p = await Proxy.start(srv.url);
  try {
    const pc = new Client({ urls: [p.url] });
    const l = await pc.acquire("js-o/a", { ttlMs: 5000 });
    await l.renew();
    await l.release();
    const s = await pc.openSession({ ttlMs: 5000 });
    await s.release((await s.claim(["js-o/b", "js-o/c"])).granted);
    await s.renew();
    await s.end();
    assert.ok(p.seen.some((x) => x.method === "PATCH"));
    assert.ok(p.seen.filter((x) => x.method === "DELETE").length >= 3);
    for (const x of p.seen) assert.equal(x.headers.origin, undefined, `${x.method} ${x.path} sent Origin`);
  } finally {
    p.close();
  }
});

test("too many waiters is too_many_requests, with the server's Retry-After", async () => {
  const w = await TestServer.start("--max-waiters-per-address", "1");
  try {
    const wc = new Client({ urls: [w.url] });
    const held = await wc.acquire("js-w/x", { ttlMs: 10_000 });
    const first = wc.acquire("js-w/x", { ttlMs: 5000, waitMs: 8000 });
    let e: TenureError | undefined;
    for (let k = 0; k < 100 && !e; k++) { // until the first waiter is parked
      await sleep(50);
      try {
        await wc.acquire("js-w/x", { ttlMs: 5000, waitMs: 50 });
      } catch (x) {
        if (!(x instanceof TenureError)) throw x;
        if (x.code === "too_many_requests") e = x;
        else assert.equal(x.code, "held"); // the first one was not parked yet
      }
    }
    assert.ok(e, "no 429");
    assert.equal(e.status, 429);
    assert.ok(e.is("too_many_requests"));
    assert.ok((e.retryAfterMs ?? 0) > 0, `Retry-After: ${String(e.retryAfterMs)}`);
    await held.release();
    await (await first).release();
  } finally {
    w.stop();
  }
});

// 421 for a host name tenured does not answer to (auth off, against DNS
// rebinding): its message names the host.  Needs a name of this machine
// that resolves to 127.0.0.1 (/etc/hosts).
test("a name the server does not know is misdirected_request", async (t) => {
  const name = hostname();
  const addr = await lookup(name, { family: 4 }).catch(() => undefined);
  if (name === "localhost" || addr?.address !== "127.0.0.1") {
    return t.skip("no name of this machine other than localhost resolves to 127.0.0.1");
  }
  const port = new URL(srv.url).port;
  const e = await new Client({ urls: [`http://${name}:${port}`] }).acquire("js-h/x", { ttlMs: 5000 })
    .then(() => undefined, (x: unknown) => x);
  assert.ok(e instanceof TenureError, String(e));
  assert.equal(e.status, 421);
  assert.equal(e.code, "misdirected_request");
  assert.ok(e.message.includes(`"${name}"`) && e.message.includes("--allow-host"), e.message);
  assert.equal(await code(c.get("js-h/x")), "not_found", "the acquire was done");
});

test("a server without sessions is not_implemented", async () => {
  for (const status of [404, 501]) {
    const old = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(status === 501 ? '{"error":"not_implemented","message":"this store has no sessions yet"}'
          : '{"error":"not_found","message":"no such route"}');
      });
    });
    await new Promise<void>((r) => old.listen(0, "127.0.0.1", r));
    try {
      const port = (old.address() as { port: number }).port;
      const e = await new Client({ urls: [`127.0.0.1:${port}`] }).openSession(5000).then(() => undefined, (x: unknown) => x);
      assert.ok(e instanceof TenureError, String(e));
      assert.equal(e.code, "not_implemented");
      assert.equal(e.status, status);
    } finally {
      old.closeAllConnections();
      old.close();
    }
  }
});
