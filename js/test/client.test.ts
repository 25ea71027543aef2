// SPDX-License-Identifier: MIT
// The TypeScript client against a real tenured (and, for transport faults,
// sockets of the test's own).

import assert from "node:assert/strict";
import { createServer as createHttp } from "node:http";
import { Socket, createServer } from "node:net";
import { after, before, test } from "node:test";
import { Client, TenureEvent } from "../src";
import { TestServer, freePort } from "./server";
import { code, sleep, untilAborted } from "./util";

let srv: TestServer;
let c: Client;

before(async () => {
  srv = await TestServer.start();
  c = new Client({ urls: [srv.url], ownerId: "js-test" });
});
after(() => srv.stop());

test("moves on after a refused connection", async () => {
  const dead = await freePort();
  const two = new Client({ urls: [`127.0.0.1:${dead}`, srv.url] });
  const l = await two.acquire("js/failover", { ttlMs: 5000 });
  assert.ok(l.held);
  assert.equal((await c.get("js/failover")).token, l.token);
  await l.release();
  assert.equal(await code(new Client({ urls: [`127.0.0.1:${dead}`] }).acquire("js/none", { ttlMs: 5000 })), "connect");
});

test("moves on after a 503, the acquire carrying a drawn request_id", async () => {
  const bodies: string[] = [];
  const busy = createHttp((req, res) => {
    let b = "";
    req.on("data", (d) => (b += d));
    req.on("end", () => {
      bodies.push(b);
      res.writeHead(503, { "content-type": "application/json" });
      res.end('{"error":"unavailable","message":"store not writable"}');
    });
  });
  await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
  try {
    const port = (busy.address() as { port: number }).port;
    const l = await new Client({ urls: [`127.0.0.1:${port}`, srv.url] }).acquire("js/503", { ttlMs: 5000 });
    assert.equal(bodies.length, 1);
    assert.match(bodies[0], /"request_id":"[0-9a-f]{32}"/);
    await l.release();
  } finally {
    busy.close();
  }
});

test("a request that was sent and timed out is not retried elsewhere", async () => {
  const held: Socket[] = [];
  const mute = createServer((s) => held.push(s)); // reads nothing, answers nothing
  await new Promise<void>((r) => mute.listen(0, "127.0.0.1", r));
  try {
    const port = (mute.address() as { port: number }).port;
    const two = new Client({ urls: [`127.0.0.1:${port}`, srv.url], requestTimeoutMs: 500 });
    assert.equal(await code(two.acquire("js/mute", { ttlMs: 5000 })), "timeout");
    assert.equal(await code(c.get("js/mute")), "not_found", "the acquire went to the second server too");
  } finally {
    held.forEach((s) => s.destroy());
    mute.close();
  }
  // A server that reads the request and drops the connection: the request
  // may have been done there, so it is not sent elsewhere.
  const drop = createServer((s) => s.once("data", () => s.destroy()));
  await new Promise<void>((r) => drop.listen(0, "127.0.0.1", r));
  try {
    const port = (drop.address() as { port: number }).port;
    const two = new Client({ urls: [`127.0.0.1:${port}`, srv.url] });
    assert.equal(await code(two.acquire("js/drop", { ttlMs: 5000 })), "transport");
    assert.equal(await code(c.get("js/drop")), "not_found", "the acquire went to the second server too");
  } finally {
    drop.close();
  }
});

test("hold aborts its body's signal when the lease is lost", async () => {
  const start = Date.now();
  let aborted = false;
  const got = await code(c.hold("js/hold-lost", { ttlMs: 1500 }, async (_l, signal) => {
    await c.forceRelease("js/hold-lost");
    await untilAborted(signal, () => { aborted = true; });
  }));
  assert.equal(got, "lost");
  assert.ok(aborted, "the body's signal was not aborted");
  assert.ok(Date.now() - start < 10_000, "the body ran on after the loss");
});

test("hold keeps the lease past its TTL and releases it", async () => {
  const token = await c.hold("js/hold-kept", { ttlMs: 600 }, async (l) => {
    await sleep(1500); // past two TTLs: only the keepalive keeps it
    assert.ok(l.held);
    return l.token;
  });
  const r = await c.check("js/hold-kept", token);
  assert.equal(r.current, false);
  assert.equal(r.floor, token);
});

test("events resume after the last id", async () => {
  const s = c.events("js/ev/");
  const it = s[Symbol.asyncIterator]();
  const first = it.next();
  await s.subscribed;
  await (await c.acquire("js/ev/a", { ttlMs: 5000 })).release();
  const e1 = (await first).value as TenureEvent;
  s.close();
  assert.equal(e1.type, "acquired");
  assert.equal(e1.name, "js/ev/a");
  const s2 = c.events("js/ev/", { lastEventId: e1.id });
  const e2 = (await s2[Symbol.asyncIterator]().next()).value as TenureEvent;
  s2.close();
  assert.equal(e2.type, "released", JSON.stringify(e2));
  assert.ok(e2.id > e1.id);
});

test("event lines and data are capped", async () => {
  for (const shape of ["line", "data"]) {
    const evil = createServer((sock) => {
      sock.once("data", () => {
        sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n: subscribed\n\n");
        const chunk = shape === "line" ? "x".repeat(1024) : `data: ${"y".repeat(1000)}\n`;
        if (shape === "line") sock.write("data: ");
        for (let k = 0; k < 70; k++) sock.write(chunk);
      });
      sock.on("error", () => undefined);
    });
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
    try {
      const port = (evil.address() as { port: number }).port;
      const s = new Client({ urls: [`127.0.0.1:${port}`] }).events("", { noReconnect: true });
      assert.equal(await code((async () => { for await (const _ of s) void _; })()), "protocol", shape);
    } finally {
      evil.close();
    }
  }
});
