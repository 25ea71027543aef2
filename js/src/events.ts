// SPDX-License-Identifier: MIT
// The event stream (GET /v1/events, text/event-stream) as an async
// iterator that reconnects through the client's URLs and resumes with
// Last-Event-ID after the last id it saw, so nothing is lost or repeated;
// when the server no longer has the missed events it sends a "reset": read
// the state again.  A line and an event's data are capped at 64 KiB.

import { TenureError, fromAnswer, local, retryAfterOf } from "./errors";
import { Transport } from "./http";

/** One event: type "acquired", "released", "expired", "revoked", "reset", "session_opened" or "session_ended". */
export interface TenureEvent {
  id: number;
  type: string;
  name?: string;
  ownerId?: string;
  token?: number;
  /** The name's floor after the event. */
  floor?: number;
  sessionId?: string;
  /** The event's JSON data as it came. */
  data: Record<string, unknown>;
}

export interface EventOptions {
  /** Resume after this id: the server sends what came after it, or a reset when it no longer has it. */
  lastEventId?: number;
  /** A stream silent this long (heartbeats included) counts as cut; default 60 s. */
  idleTimeoutMs?: number;
  /** End at the first cut (the iteration throws) instead of resuming. */
  noReconnect?: boolean;
  /** Ends the stream when aborted. */
  signal?: AbortSignal;
}

export const MAX_LINE = 64 * 1024;

export class EventStream implements AsyncIterable<TenureEvent> {
  #t: Transport;
  #prefix: string;
  #o: EventOptions;
  #ctl = new AbortController();
  #lastId?: number;
  #attempt = 0;
  #url = -1;
  #subscribed: Promise<void>;
  #markSubscribed!: () => void;

  /** @internal */
  constructor(t: Transport, prefix: string, o: EventOptions = {}) {
    this.#t = t;
    this.#prefix = prefix;
    this.#o = o;
    this.#lastId = o.lastEventId;
    this.#subscribed = new Promise((r) => { this.#markSubscribed = r; });
    o.signal?.addEventListener("abort", () => this.close(), { once: true });
  }

  /** The id to resume from, or undefined when none was seen yet. */
  get lastId(): number | undefined {
    return this.#lastId;
  }

  /** Resolves once a server confirmed the subscription (while the stream is being iterated). */
  get subscribed(): Promise<void> {
    return this.#subscribed;
  }

  /** Ends the stream: the iteration ends. */
  close(): void {
    this.#ctl.abort();
  }

  get closed(): boolean {
    return this.#ctl.signal.aborted;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TenureEvent> {
    while (!this.closed) {
      let body: AsyncIterable<Uint8Array>;
      let idle: IdleTimer;
      try {
        [body, idle] = await this.#open();
      } catch (e) {
        if (this.closed) return;
        if (this.#o.noReconnect || !retryable(e)) throw e;
        await this.#pause(true);
        continue;
      }
      try {
        for await (const ev of this.#read(body, idle)) yield ev;
        if (this.closed) return;
        throw local("transport", "event stream cut");
      } catch (e) {
        if (this.closed) return;
        if (this.#o.noReconnect) throw e;
        await this.#pause(false);
      } finally {
        idle.stop();
      }
    }
  }

  async #pause(failed: boolean): Promise<void> {
    let d = 100;
    if (failed) {
      this.#attempt++;
      for (let k = 1; k < this.#attempt && d < 5000; k++) d *= 2;
      d = Math.min(d, 5000);
    }
    await new Promise<void>((r) => {
      const timer = setTimeout(r, d);
      this.#ctl.signal.addEventListener("abort", () => { clearTimeout(timer); r(); }, { once: true });
    });
  }

  async #open(): Promise<[AsyncIterable<Uint8Array>, IdleTimer]> {
    this.#url = this.#url < 0 ? this.#t.currentIndex : (this.#url + 1) % this.#t.urls.length;
    const base = this.#t.urls[this.#url];
    const path = `/v1/events${this.#prefix ? `?prefix=${encodeURIComponent(this.#prefix)}` : ""}`;
    const headers = this.#t.headers(false, "text/event-stream");
    if (this.#lastId !== undefined) headers["last-event-id"] = String(this.#lastId);
    const conn = new AbortController();
    const stop = () => conn.abort();
    this.#ctl.signal.addEventListener("abort", stop, { once: true });
    const first = setTimeout(stop, this.#t.timeoutMs); // no answer at all: a cut
    let resp: Response;
    try {
      resp = await fetch(base + path, { headers, signal: conn.signal });
    } catch (e) {
      throw new TenureError("transport", `${base}: ${String((e as Error).cause ?? e)}`, { cause: e });
    } finally {
      clearTimeout(first);
    }
    if (resp.status !== 200) {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse((await resp.text()).slice(0, 1 << 20)) as Record<string, unknown>;
      } catch {
        // not JSON: the status still says what happened
      }
      throw fromAnswer(resp.status, body, retryAfterOf(resp.headers.get("retry-after")), new URL(base).hostname);
    }
    this.#attempt = 0;
    const idle = new IdleTimer(this.#o.idleTimeoutMs ?? 60_000, stop);
    // closed while the caller is not iterating: the generator's finally may never run
    this.#ctl.signal.addEventListener("abort", () => idle.stop(), { once: true });
    return [resp.body as unknown as AsyncIterable<Uint8Array>, idle];
  }

  /** Lines until events: yields each event with data; its id becomes the resume point. */
  async *#read(body: AsyncIterable<Uint8Array>, idle: IdleTimer): AsyncGenerator<TenureEvent> {
    let buf = Buffer.alloc(0);
    let id: number | undefined;
    let data: string | undefined;
    for await (const chunk of body) {
      idle.touch();
      buf = Buffer.concat([buf, Buffer.from(chunk)]);
      for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
        let line = buf.subarray(0, nl).toString("utf8");
        buf = buf.subarray(nl + 1);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (line === "") {
          if (id !== undefined) this.#lastId = id;
          const ev = data !== undefined ? eventOf(id, data) : undefined;
          id = undefined;
          data = undefined;
          if (ev) yield ev;
          continue;
        }
        if (line.startsWith(":")) {
          if (line.startsWith(": subscribed")) this.#markSubscribed();
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "id" && /^[0-9]+$/.test(value)) id = Number(value);
        if (field === "data") {
          data = data === undefined ? value : `${data}\n${value}`;
          if (data.length > MAX_LINE) throw local("protocol", `event data longer than ${MAX_LINE} bytes`);
        }
      }
      if (buf.length > MAX_LINE) throw local("protocol", `event line longer than ${MAX_LINE} bytes`);
    }
  }
}

function retryable(e: unknown): boolean {
  return e instanceof TenureError && (e.is("transport") || e.status === 503 || e.status === 429 || e.code === "protocol");
}

function eventOf(id: number | undefined, data: string): TenureEvent | undefined {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!j || typeof j !== "object" || typeof j.type !== "string") return undefined;
  const s = (k: string) => (typeof j[k] === "string" ? (j[k] as string) : undefined);
  const n = (k: string) => (typeof j[k] === "number" ? (j[k] as number) : undefined);
  return { id: id ?? 0, type: j.type, name: s("name"), ownerId: s("owner_id"), token: n("token"),
    floor: n("floor"), sessionId: s("session_id"), data: j };
}

/** Aborts a connection that stayed silent (heartbeats included) for its timeout. */
class IdleTimer {
  #timer: NodeJS.Timeout;
  #ms: number;
  #fire: () => void;

  constructor(ms: number, fire: () => void) {
    this.#ms = ms;
    this.#fire = fire;
    this.#timer = setTimeout(fire, ms).unref();
  }

  touch(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#fire, this.#ms).unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}
