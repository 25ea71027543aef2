// SPDX-License-Identifier: MIT
// A worker in a process of its own: it holds a lease through Client.hold
// and writes fenced rows into a sink, one JSON line per event on stdout.
// After its first write it stops itself (SIGSTOP, as a long pause of the
// process would) between its held check and its next write: the gap no
// lease can close.  Run by frozen.test.ts, which takes the lease over
// meanwhile and resumes it.
//
// Usage: node worker.js [--no-fence] TTL_MS URL NAME SINK (sqlite:PATH or a
// postgresql:// URL).  --no-fence writes without the fence: the test's
// control, which shows the zombie's write landing.  Exit 4 when the lease
// was lost, 1 on errors.

import { Client, Lease, TenureError } from "../src";
import { write } from "./sink";

const say = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
const kind = (e: unknown) => (e instanceof TenureError ? (e.code === "expired" ? "Expired" : e.is("lost") ? "Lost" : e.code) : String(e));

async function work(l: Lease, spec: string, fenced: boolean): Promise<void> {
  say({ token: l.token });
  for (let step = 0; ; step++) {
    if (!l.held) { // right before each write
      say({ learned: kind(l.error), safe: l.safeForMs });
      return;
    }
    if (step === 1) {
      say({ stopping: true });
      process.kill(process.pid, "SIGSTOP"); // the whole process stops here until SIGCONT
    }
    const admitted = await write(spec, l.name, l.token, step, fenced);
    say({ step, admitted, safe: l.safeForMs });
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main(): Promise<void> {
  let args = process.argv.slice(2);
  const fenced = args[0] !== "--no-fence";
  if (!fenced) args = args.slice(1);
  if (args.length !== 4) {
    process.stderr.write("usage: worker [--no-fence] TTL_MS URL NAME SINK\n");
    process.exit(2);
  }
  const [ttl, url, name, spec] = args;
  const c = new Client({ urls: [url] });
  try {
    await c.hold(name, { ttlMs: Number(ttl), owner: "zombie" }, (l) => work(l, spec, fenced));
  } catch (e) {
    if (e instanceof TenureError && e.is("lost")) {
      say({ hold_raised: kind(e) });
      process.exit(4);
    }
    process.stderr.write(`worker: ${String(e)}\n`);
    process.exit(1);
  }
  say({ hold_returned: true });
  process.exit(0);
}

void main();
