// SPDX-License-Identifier: MIT
// The fair-share recipe over a real tenured: workers balance within one
// shard of each other, a shard force-released under a worker is reported
// lost and claimed again with a higher token, a worker that leaves has its
// shards taken by the others, one that joins gets its share from their
// surplus, and every shard reported gained is the live grant with the
// token given.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Client, Lease, TenureError, share } from "../src";
import { TestServer } from "./server";
import { sleep } from "./util";

let srv: TestServer;
let c: Client;

before(async () => {
  srv = await TestServer.start();
  c = new Client({ urls: [srv.url] });
});
after(() => srv.stop());

test("the target splits within one", () => {
  const live = ["c", "a", "b"];
  assert.deepEqual(live.map((me) => share.target(1000, live, me)), [333, 334, 333]);
  assert.equal(share.target(10, [], "x"), 10);
  assert.equal(share.target(2, live, "c"), 0);
  assert.equal(share.target(2, ["a", "b"], "a"), 1, "me counted once when listed");
});

/** What a worker's callbacks say it holds. */
class Owned {
  leases = new Map<string, Lease>();
  lost = new Map<string, string>();
  gain = (ls: Map<string, Lease>) => { for (const [n, l] of ls) this.leases.set(n, l); };
  loss = (names: string[], why: string) => {
    for (const n of names) {
      this.leases.delete(n);
      this.lost.set(n, why);
    }
  };
}

test("workers share the shards", async () => {
  const shards = Array.from({ length: 31 }, (_, k) => `shard:${String(k).padStart(2, "0")}`);
  const ws = new Map<string, Owned>();
  const running = new Map<string, share.ShareWorker>();
  const start = (name: string) => {
    const o = new Owned();
    ws.set(name, o);
    running.set(name, share.ShareWorker.start(c, { group: "g", worker: name, shards, ttlMs: 1500,
      onGain: o.gain, onLoss: o.loss }));
  };
  const balanced = async (...live: string[]) => {
    let counts: number[] = [];
    for (const end = Date.now() + 30_000; Date.now() < end; await sleep(50)) {
      counts = live.map((w) => ws.get(w)!.leases.size);
      const sum = counts.reduce((a, b) => a + b, 0);
      if (sum === shards.length && Math.max(...counts) - Math.min(...counts) <= 1) {
        for (const w of live) {
          for (const [n, l] of ws.get(w)!.leases) {
            assert.ok((await c.check(n, l.token)).current && l.held, `${w} holds ${n} token ${l.token}`);
          }
        }
        return;
      }
    }
    assert.fail(`${live.join(",")} not balanced: ${counts.join(",")}`);
  };
  for (const w of ["w1", "w2", "w3"]) start(w);
  await balanced("w1", "w2", "w3");
  // a shard ended on the server: w1 reports it lost, and it is claimed again with a higher token
  const [name, old] = [...ws.get("w1")!.leases][0];
  await c.forceRelease(name);
  for (const end = Date.now() + 30_000; ws.get("w1")!.lost.get(name) !== "lost"; await sleep(20)) {
    assert.ok(Date.now() < end, `the loss of ${name} went unseen`);
  }
  for (const end = Date.now() + 30_000; ; await sleep(20)) {
    const tok = await c.get(name).then((i) => i.token, (e: unknown) => {
      if (e instanceof TenureError && e.code === "not_found") return 0;
      throw e;
    });
    if (tok > old.token) break;
    assert.ok(Date.now() < end, `${name} was not claimed again`);
  }
  await balanced("w1", "w2", "w3");
  const had = [...ws.get("w2")!.leases.keys()];
  await running.get("w2")!.stop(); // leaves: its session ends, its shards are free
  running.delete("w2");
  for (const n of had) assert.equal(ws.get("w2")!.lost.get(n), "stopped", n);
  await balanced("w1", "w3");
  start("w4"); // joins late: the others give their surplus back
  await balanced("w1", "w3", "w4");
  for (const w of running.values()) await w.stop();
  assert.deepEqual(await c.listAll("shard:"), [], "after every worker stopped");
});
