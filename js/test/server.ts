// SPDX-License-Identifier: MIT
// Real tenured processes for the tests: each on a free loopback port with
// its own data directory, ready once /readyz answers 200.  TN_BIN names the
// build's bin/ folder, TN_SRC the source tree.

import { ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, openSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const src = (): string => process.env.TN_SRC ?? resolve(__dirname, "..", "..", "..");
export const bin = (): string => process.env.TN_BIN ?? join(src(), "build", "dev", "bin");

/** A loopback port nothing listens on now, below the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let k = 0; k < 200; k++) {
    const p = 12000 + Math.floor(Math.random() * 19000);
    const ok = await new Promise<boolean>((r) => {
      const s = createServer();
      s.once("error", () => r(false));
      s.listen(p, "127.0.0.1", () => s.close(() => r(true)));
    });
    if (ok) return p;
  }
  throw new Error("no free port");
}

export class TestServer {
  constructor(readonly url: string, readonly dir: string, readonly proc: ChildProcess) {}

  static async start(...args: string[]): Promise<TestServer> {
    const dir = mkdtempSync(join(tmpdir(), "tenure-js-"));
    for (let tries = 0; ; tries++) {
      const port = await freePort();
      const log = openSync(join(dir, "tenured.log"), "a");
      const proc = spawn(join(bin(), "tenured"), ["--listen", `127.0.0.1:${port}`, "--data-dir", join(dir, "data"), ...args],
        { stdio: ["ignore", log, log] });
      const s = new TestServer(`http://127.0.0.1:${port}`, dir, proc);
      if (await s.ready(20_000)) return s;
      s.stop();
      if (tries >= 3) throw new Error(`tenured did not become ready (log in ${dir})`);
    }
  }

  async ready(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (this.proc.exitCode !== null) return false;
      try {
        const r = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) });
        if (r.status === 200) return true;
      } catch {
        // not yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  stop(): void {
    this.proc.kill("SIGKILL");
  }
}

/** One check-and-advance of the C fence kit on spec in its own transaction: "admitted" or "stale". */
export function cKit(spec: string, resource: string, token: number): string {
  const r = spawnSync(join(bin(), "tn-conformance"), ["--fence", spec, resource, String(token)], { encoding: "utf8" });
  const out = r.stdout.trim();
  if (!((r.status === 0 && out === "admitted") || (r.status === 3 && out === "stale"))) {
    throw new Error(`tn-conformance --fence ${resource} ${token}: exit ${r.status}, ${out} ${r.stderr}`);
  }
  return out;
}
