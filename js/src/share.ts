// SPDX-License-Identifier: MIT
// The fair-share recipe (docs/SESSIONS.md): the workers of a group spread a
// list of shards evenly over the workers that are alive, and a shard moves
// from one to another only through the lease server, with a higher token
// at each move.
//
// Each worker opens a session with owner_id "<group>/<worker>", reads the
// live sessions of the group (GET /v1/sessions?prefix=<group>/) and follows
// the event stream (session_opened, session_ended, and the shards' own
// events).  Its target is its share: with S shards and n live sessions,
// ceil(S/n) for the first S mod n sessions in session_id order and
// floor(S/n) for the others, so every worker computes the same split and
// the counts differ by at most one.  Below target it claims free shards
// (picked at random) in one batch; above it, it calls onLoss (which must
// return, or resolve, only once nothing writes those shards any more) and
// releases the surplus in one batch.  When its session is lost (a frozen
// or cut-off worker), every shard is reported lost and it joins again with
// a new session.  Each round also checks the shards it holds against the
// list of held shards: one whose live token is another (a force release,
// an end no event told of) is reported lost.

import type { Client } from "./client";
import { local } from "./errors";
import type { EventStream } from "./events";
import type { Lease } from "./lease";
import type { Session } from "./session";

export interface ShareOptions {
  /** The group; no "/". */
  group: string;
  /** This worker's name in the group. */
  worker: string;
  /** Every shard of the group, the same list in each worker. */
  shards: string[];
  /** The TTL of the worker's session; default 3000 ms. */
  ttlMs?: number;
  /** The balance is looked at least this often, besides the events; default 2000 ms. */
  intervalMs?: number;
  /** The prefix of the shards' names, for the list of held shards and the events; default their longest common prefix. */
  prefix?: string;
  /** Gets the shards just claimed (name -> lease: stamp every write with its token). */
  onGain?: (leases: Map<string, Lease>) => void | Promise<void>;
  /**
   * Gets the shards given up, and why: "released" (surplus, released once
   * it returns), "lost" or "expired" (the session or the shard was lost:
   * stop writing at once; the fence refuses stale writes anyway),
   * "stopped" (the worker is stopping).
   */
  onLoss?: (names: string[], why: string) => void | Promise<void>;
}

/** The share of session me among the live session ids (me counted once, whether listed or not). */
export function target(shards: number, live: string[], me: string): number {
  const ids = [...new Set([...live, me])].sort();
  const rank = ids.indexOf(me);
  return Math.floor(shards / ids.length) + (rank < shards % ids.length ? 1 : 0);
}

function commonPrefix(names: string[]): string {
  if (names.length === 0) return "";
  const sorted = [...names].sort();
  const lo = sorted[0];
  const hi = sorted[sorted.length - 1];
  let i = 0;
  while (i < lo.length && i < hi.length && lo[i] === hi[i]) i++;
  return lo.slice(0, i);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One worker of a group (see the module):
 * `const w = ShareWorker.start(client, { group, worker, shards, onGain, onLoss }); ... await w.stop();`.
 * onGain and onLoss run from the worker's loop, one at a time.
 */
export class ShareWorker {
  readonly ownerId: string;
  /** Its share at the last look. */
  target = 0;
  /** The error of the last round that failed (it is retried: a server's error, or what onGain or onLoss threw), or undefined. */
  lastError?: unknown;
  readonly #c: Client;
  readonly #o: ShareOptions & { ttlMs: number; intervalMs: number };
  readonly #prefix: string;
  readonly #set: Set<string>;
  readonly #owned = new Map<string, Lease>();
  #lost: Lease[] = []; // reported by the session
  #kick = true;
  #stopping = false;
  #wake?: () => void;
  #session?: Session;
  readonly #events: EventStream;
  #loop?: Promise<void>;
  #follower?: Promise<void>;

  private constructor(c: Client, o: ShareOptions) {
    if (!o.group || o.group.includes("/") || !o.worker) throw local("invalid", "share: a group without '/' and a worker name are needed");
    this.#set = new Set(o.shards);
    if (this.#set.size !== o.shards.length) throw local("invalid", "share: a shard is given twice");
    this.#c = c;
    this.#o = { ...o, ttlMs: o.ttlMs ?? 3000, intervalMs: o.intervalMs ?? 2000 };
    this.ownerId = `${o.group}/${o.worker}`;
    this.#prefix = o.prefix ?? commonPrefix(o.shards);
    this.#events = c.events(this.#prefix);
  }

  /** Starts a worker of the group: it opens its session, claims its share and follows the group until stop(). */
  static start(c: Client, o: ShareOptions): ShareWorker {
    const w = new ShareWorker(c, o);
    w.#follower = w.#follow();
    w.#loop = w.#run();
    return w;
  }

  /** The shards this worker holds now (name -> lease). */
  owned(): Map<string, Lease> {
    return new Map(this.#owned);
  }

  /** Looks at the balance now rather than at the next event. */
  kick(): void {
    this.#kick = true;
    this.#wake?.();
  }

  /** Gives every shard back (onLoss "stopped", then the session ends) and resolves once the worker stopped. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    this.#events.close();
    await this.#loop;
    await this.#follower;
  }

  async #run(): Promise<void> {
    for (;;) {
      while (!this.#kick && !this.#stopping) {
        await new Promise<void>((r) => {
          const t = setTimeout(done, this.#o.intervalMs);
          function done(): void {
            clearTimeout(t);
            r();
          }
          this.#wake = done;
        });
        this.#wake = undefined;
        this.#kick = true; // the interval passed: look anyway
      }
      if (this.#stopping) break;
      this.#kick = false;
      try {
        await this.#step();
        this.lastError = undefined;
      } catch (e) {
        this.lastError = e;
        await sleep(Math.min(1000, this.#o.ttlMs / 10));
        this.#kick = true;
      }
    }
    await this.#leave();
  }

  async #giveUp(names: string[], why: string): Promise<void> {
    const sorted = [...new Set(names)].sort();
    for (const n of sorted) this.#owned.delete(n);
    if (sorted.length > 0) await this.#o.onLoss?.(sorted, why);
  }

  async #step(): Promise<void> {
    const heard = this.#lost;
    this.#lost = [];
    const s0 = this.#session;
    if (s0 && !s0.held) {
      // lost or run out: so is every shard of it; join again.  (Only the
      // session in hand counts: an older one's report must not end it.)
      await this.#giveUp([...this.#owned.keys()], s0.error?.code === "expired" ? "expired" : "lost");
      this.#session = undefined;
    }
    await this.#giveUp(heard.filter((l) => this.#owned.get(l.name) === l).map((l) => l.name), "lost");
    if (!this.#session) {
      this.#session = await this.#c.openSession({ ttlMs: this.#o.ttlMs, owner: this.ownerId,
        onEnd: () => this.kick(),
        onLeaseEnd: (l, why) => {
          if (why === "lost" || why === "expired") {
            this.#lost.push(l);
            this.kick();
          }
        } });
    }
    await this.#balance(this.#session);
  }

  async #balance(s: Session): Promise<void> {
    const live = (await this.#c.sessionsAll(`${this.#o.group}/`)).map((i) => i.id);
    const t = target(this.#o.shards.length, live, s.id);
    this.target = t;
    const taken = new Map((await this.#c.listAll(this.#prefix)).map((i) => [i.name, i.token]));
    // a shard whose live token is another (or none) was lost: a force
    // release, an end no event told of
    await this.#giveUp([...this.#owned].filter(([n, l]) => taken.get(n) !== l.token).map(([n]) => n), "lost");
    const mine = [...this.#owned.keys()].sort();
    if (mine.length > t) {
      const surplus = mine.slice(t);
      const leases = surplus.map((n) => this.#owned.get(n)!);
      await this.#giveUp(surplus, "released"); // the application stops writing them first
      await s.release(leases);
      return;
    }
    const want = t - mine.length;
    if (want <= 0) return;
    const free = this.#o.shards.filter((n) => !taken.has(n) && !this.#owned.has(n));
    if (free.length === 0) return;
    for (let i = free.length - 1; i > 0; i--) { // workers starting together reach for different ones
      const j = Math.floor(Math.random() * (i + 1));
      [free[i], free[j]] = [free[j], free[i]];
    }
    const res = await s.claim(free.slice(0, want));
    const got = new Map(res.granted.filter((l) => this.#set.has(l.name)).map((l) => [l.name, l]));
    for (const [n, l] of got) this.#owned.set(n, l);
    if (got.size > 0) await this.#o.onGain?.(got);
    if (got.size < want && res.held.length + res.lockDelay.length > 0) {
      await sleep(10 + Math.floor(Math.random() * 40));
      this.#kick = true; // others took some of the same: look again soon
    }
  }

  async #leave(): Promise<void> {
    try {
      await this.#giveUp([...this.#owned.keys()], "stopped");
    } catch (e) {
      this.lastError = e; // the session ends all the same
    }
    const s = this.#session;
    this.#session = undefined;
    await s?.close().catch(() => undefined); // it ended anyway: lost, or the server will expire it
  }

  /** Kicks the worker on the events that can change its share: a session of the group opened or ended, a shard ended, a reset. */
  async #follow(): Promise<void> {
    const mine = `${this.#o.group}/`;
    try {
      for await (const e of this.#events) {
        if (e.type === "session_opened" || e.type === "session_ended") {
          if (e.ownerId?.startsWith(mine)) this.kick();
        } else if (e.type === "reset" || (e.name !== undefined && this.#set.has(e.name) && e.type !== "acquired")) {
          this.kick(); // a shard may be free now
        }
      }
    } catch {
      // closed, or the stream gave up: the interval still looks
    }
  }
}
