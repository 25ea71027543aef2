// SPDX-License-Identifier: MIT
// The incident with a Node.js worker (worker.ts, a process of its own): it
// holds a lease through hold(), is frozen (SIGSTOP) between its held check
// and its write, stays frozen past its TTL while the lease goes to a
// successor that writes through the fence, and is resumed (SIGCONT).  Its
// stale write is refused by the fence, in SQLite and in PostgreSQL, as the
// C kit refuses it; it learns the loss, and hold() throws lost/expired
// without releasing the successor's grant.  The control runs the same
// worker without the fence and sees the zombie's write land.

import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { Client } from "../src";
import { TestServer, cKit } from "./server";
import { mark, newSink, rows, write } from "./sink";
import { sleep } from "./util";

const TTL_MS = 4000;
const FROZEN_MS = TTL_MS + 500;
let srv: TestServer;
let c: Client;
const dir = mkdtempSync(join(tmpdir(), "tenure-js-frozen-"));

before(async () => {
  srv = await TestServer.start();
  c = new Client({ urls: [srv.url] });
});
after(() => srv.stop());

type Line = Record<string, unknown>;

class Worker {
  proc: ChildProcess;
  got: Line[] = [];
  #waiters: (() => void)[] = [];
  #done = false;
  exit: Promise<number>;

  constructor(args: string[]) {
    this.proc = spawn(process.execPath, [join(__dirname, "worker.js"), ...args], { stdio: ["ignore", "pipe", "inherit"] });
    createInterface({ input: this.proc.stdout! }).on("line", (ln) => {
      try {
        this.got.push(JSON.parse(ln) as Line);
      } catch {
        process.stderr.write(`worker: ${ln}\n`);
      }
      this.#wake();
    });
    this.exit = new Promise((r) => this.proc.on("exit", (code) => { this.#done = true; this.#wake(); r(code ?? -1); }));
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  async until(key: string): Promise<Line> {
    const end = Date.now() + 60_000;
    for (;;) {
      const hit = this.got.find((l) => key in l);
      if (hit) return hit;
      if (this.#done || Date.now() > end) assert.fail(`worker ended before "${key}": ${JSON.stringify(this.got)}`);
      await new Promise<void>((r) => { this.#waiters.push(r); setTimeout(r, 100); });
    }
  }

  after(key: string): Line | undefined {
    const k = this.got.findIndex((l) => key in l);
    return k >= 0 ? this.got[k + 1] : undefined;
  }

  stopped(): boolean {
    const s = readFileSync(`/proc/${this.proc.pid}/stat`, "utf8");
    const state = s.slice(s.lastIndexOf(")") + 2).split(" ")[0];
    return state === "T" || state === "t";
  }

  kill(): void {
    if (this.proc.exitCode === null) {
      this.proc.kill("SIGCONT");
      this.proc.kill("SIGKILL");
    }
  }
}

/** The incident up to the resumption; returns the worker's token and the successor's. */
async function freezeAndTakeOver(w: Worker, spec: string, name: string): Promise<[number, number]> {
  const t1 = (await w.until("token")).token as number;
  await w.until("stopping");
  const end = Date.now() + 10_000;
  while (!w.stopped()) {
    if (Date.now() > end) assert.fail("the worker did not stop");
    await sleep(10);
  }
  const frozenAt = Date.now();
  await c.forceRelease(name);
  const succ = await c.acquire(name, { ttlMs: 10_000, owner: "successor" });
  assert.ok(succ.token > t1, `successor's token ${succ.token} <= ${t1}`);
  assert.equal(await write(spec, name, succ.token, 100, true), true, "the successor's fenced write");
  await sleep(FROZEN_MS - (Date.now() - frozenAt));
  w.proc.kill("SIGCONT");
  return [t1, succ.token];
}

for (const kind of ["sqlite", "postgres"]) {
  test(`frozen Node.js worker is fenced (${kind})`, async (t) => {
    const spec = await newSink(kind, dir);
    if (!spec) return t.skip("TENURE_TEST_PG_URL is not set (run under scripts/with-pg.sh)");
    const name = `js-frozen/${kind}`;
    const w = new Worker([String(TTL_MS), srv.url, name, spec]);
    try {
      const [t1, t2] = await freezeAndTakeOver(w, spec, name);
      const code = await w.exit;
      const ev = w.after("stopping");
      console.log(`frozen Node.js worker (${kind}): the write after the pause: ${JSON.stringify(ev)}`);
      assert.ok(ev && ev.step === 1 && ev.admitted === false, `the zombie's write after the gap was not refused: ${JSON.stringify(w.got)}`);
      const learned = w.got.find((l) => "learned" in l);
      assert.ok(learned && learned.safe === 0 && ["Lost", "Expired"].includes(learned.learned as string),
        `the worker did not learn the loss with safe time 0: ${JSON.stringify(w.got)}`);
      const raised = w.got[w.got.length - 1].hold_raised;
      assert.ok(code === 4 && ["Lost", "Expired"].includes(raised as string), `hold did not end in a loss (exit ${code}): ${JSON.stringify(w.got)}`);
      assert.deepEqual(await rows(spec), [`${name}/${t1}/0`, `${name}/${t2}/100`]);
      assert.equal(await mark(spec, name), t2);
      assert.equal((await c.check(name, t2)).current, true, "hold released the successor's grant");
      assert.equal(cKit(spec, name, t1), "stale", "the C kit disagrees");
      assert.equal(cKit(spec, name, t2), "admitted", "the C kit disagrees");
    } finally {
      w.kill();
    }
  });
}

test("frozen Node.js worker without the fence writes (the control)", async () => {
  const spec = (await newSink("sqlite", dir))!;
  const name = "js-frozen/control";
  const w = new Worker(["--no-fence", String(TTL_MS), srv.url, name, spec]);
  try {
    const [t1, t2] = await freezeAndTakeOver(w, spec, name);
    assert.equal(await w.exit, 4, JSON.stringify(w.got));
    const ev = w.after("stopping");
    console.log(`frozen Node.js worker without the fence: the write after the pause: ${JSON.stringify(ev)}`);
    assert.ok(ev && ev.admitted === true, `without the fence it should land: ${JSON.stringify(w.got)}`);
    assert.deepEqual(await rows(spec), [`${name}/${t1}/0`, `${name}/${t2}/100`, `${name}/${t1}/1`]);
  } finally {
    w.kill();
  }
});
