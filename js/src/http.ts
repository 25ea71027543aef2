// SPDX-License-Identifier: MIT
// The requests of the client: base URLs tried in turn (the next one when
// nothing was sent, or on a 503; an acquire's request_id makes that safe), a
// deadline over the whole request, and the monotonic instant just before the
// request was sent (what safe time counts from).  A request that was sent
// and timed out is never retried elsewhere.

import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { TenureError, local, retryAfterOf } from "./errors";

export const MAX_URLS = 8;
export const NAME_MAX = 256;
export const OWNER_MAX = 128;
/** Tokens are JSON integers below 2^53: every one is a safe integer of JavaScript. */
export const TOKEN_MAX = Number.MAX_SAFE_INTEGER;
const MAX_BODY = 1 << 20;

/**
 * One answer: status, parsed body (empty when none), the instant
 * (performance.now()) just before its request was sent, and the Retry-After
 * (ms) and host name the error of it reports.
 */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
  sent: number;
  retryAfterMs?: number;
  host?: string;
}

/** The monotonic clock, in ms (performance.now: CLOCK_MONOTONIC, which also runs while the process is stopped). */
export const now = (): number => performance.now();

export const drawId = (): string => randomBytes(16).toString("hex");

export const byteLen = (s: string): number => Buffer.byteLength(s, "utf8");

export function checkName(name: string): void {
  if (typeof name !== "string" || name.length === 0 || byteLen(name) > NAME_MAX) {
    throw local("invalid", `a lease name must be 1 to ${NAME_MAX} bytes`);
  }
}

export const leasePath = (name: string): string => `/v1/leases/${encodeURIComponent(name)}`;

/** Whether a fetch failure happened before anything was sent (no connection could be made). */
function notConnected(e: unknown): boolean {
  const codes = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN",
    "UND_ERR_CONNECT_TIMEOUT", "ECONNRESET_BEFORE_SEND"]);
  for (let x: unknown = e; x; x = (x as { cause?: unknown }).cause) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === "string" && codes.has(code)) return true;
    if (Array.isArray((x as { errors?: unknown }).errors)) {
      return ((x as { errors: unknown[] }).errors).every(notConnected);
    }
  }
  return false;
}

export interface TransportOptions {
  urls: string[];
  bearer?: string;
  requestTimeoutMs: number;
}

export class Transport {
  readonly urls: string[];
  readonly bearer?: string;
  readonly timeoutMs: number;
  private current = 0;

  constructor(o: TransportOptions) {
    if (!Array.isArray(o.urls) || o.urls.length < 1 || o.urls.length > MAX_URLS) {
      throw local("invalid", `between 1 and ${MAX_URLS} server URLs are needed`);
    }
    this.urls = o.urls.map(parseBase);
    if (o.bearer !== undefined && /[\r\n]/.test(o.bearer)) {
      throw local("invalid", "the bearer token contains a line break");
    }
    this.bearer = o.bearer;
    this.timeoutMs = o.requestTimeoutMs;
  }

  /**
   * The client's headers.  Never an Origin: tenured refuses a state change
   * that names a foreign one (403), a check against web pages that only
   * browsers' requests trip (Node's fetch sends none either).
   */
  headers(json: boolean, accept = "application/json"): Record<string, string> {
    const h: Record<string, string> = { accept };
    if (json) h["content-type"] = "application/json";
    if (this.bearer) h.authorization = `Bearer ${this.bearer}`;
    return h;
  }

  /** The index of the URL that last answered. */
  get currentIndex(): number {
    return this.current;
  }

  /**
   * Sends method path with body (JSON, or none) and returns the answer.
   * The whole request ends by deadline (a now() instant), or the request
   * timeout plus extraMs from now when deadline is 0.
   */
  async call(method: string, path: string, body?: unknown, extraMs = 0, deadline = 0, cancel?: AbortSignal): Promise<Answer> {
    let end = now() + this.timeoutMs + extraMs;
    if (deadline && deadline < end) end = deadline;
    const data = body === undefined ? undefined : JSON.stringify(body);
    const start = this.current;
    let last: Answer | undefined;
    let err: TenureError | undefined;
    for (let k = 0; k < this.urls.length; k++) {
      const idx = (start + k) % this.urls.length;
      const left = Math.floor(end - now());
      if (left <= 0) {
        err = new TenureError("timeout", `${this.urls[idx]}: no answer in time`);
        break;
      }
      let a: Answer;
      try {
        a = await this.once(this.urls[idx], method, path, data, left, cancel);
      } catch (e) {
        if (e instanceof TenureError && e.code === "connect") {
          err = e; // nothing was sent: the next URL may take it
          continue;
        }
        throw e;
      }
      this.current = idx;
      if (a.status === 503 && k + 1 < this.urls.length) {
        last = a; // unchanged state: another instance may take it
        continue;
      }
      return a;
    }
    if (last) return last;
    throw err ?? local("connect", "no server");
  }

  private async once(base: string, method: string, path: string, data: string | undefined, timeoutMs: number,
    cancel?: AbortSignal): Promise<Answer> {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), timeoutMs);
    const stop = () => ctl.abort();
    if (cancel?.aborted) stop();
    cancel?.addEventListener("abort", stop, { once: true });
    const why = (e: unknown): TenureError => {
      if (cancel?.aborted) return new TenureError("interrupted", `${base}: cancelled`, { cause: e });
      if (ctl.signal.aborted) return new TenureError("timeout", `${base}: no answer in ${timeoutMs} ms`, { cause: e });
      return new TenureError("transport", `${base}: ${String((e as Error).cause ?? e)}`, { cause: e });
    };
    const sent = now(); // before any byte of it can be written
    let resp: Response;
    let text: string;
    try {
      try {
        resp = await fetch(base + path, { method, body: data, headers: this.headers(data !== undefined),
          signal: ctl.signal, redirect: "manual" });
      } catch (e) {
        if (notConnected(e)) throw new TenureError("connect", `${base}: ${String((e as Error).cause ?? e)}`, { cause: e });
        throw why(e);
      }
      try {
        text = await readCapped(resp);
      } catch (e) {
        if (e instanceof TenureError) throw e;
        throw why(e);
      }
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener("abort", stop);
    }
    let parsed: Record<string, unknown> = {};
    if (text.trim() !== "") {
      try {
        const v: unknown = JSON.parse(text);
        if (v && typeof v === "object" && !Array.isArray(v)) parsed = v as Record<string, unknown>;
      } catch {
        // not JSON: the status still says what happened
      }
    }
    return { status: resp.status, body: parsed, sent, retryAfterMs: retryAfterOf(resp.headers.get("retry-after")),
      host: new URL(base).hostname };
  }
}

async function readCapped(resp: Response): Promise<string> {
  if (!resp.body) return "";
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of resp.body as unknown as AsyncIterable<Uint8Array>) {
    n += c.length;
    if (n > MAX_BODY) throw local("protocol", `answer larger than ${MAX_BODY} bytes`);
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseBase(s: string): string {
  let t = s.includes("://") ? s : `http://${s}`;
  t = t.replace(/\/+$/, "");
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    throw local("invalid", `server URL "${s}" must be http:// or https://`);
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.host) {
    throw local("invalid", `server URL "${s}" must be http:// or https://`);
  }
  return t;
}
