// SPDX-License-Identifier: MIT
// The errors of the client: one class, TenureError, whose code is the
// server's error code ("held", "lost", ...) or a local one, with the same
// names as the C, Python, Go and Java clients (docs/CLIENT.md).

/** A live lease as the server reports it (get, list, the holder of a held name). */
export interface LeaseInfo {
  name: string;
  ownerId: string;
  token: number;
  /** The time it had left when the server answered (0 when not reported). */
  expiresInMs: number;
}

/** Kinds that are also another kind: an expired lease is lost; connect and timeout are transport errors. */
const PARENT: Record<string, string> = { expired: "lost", connect: "transport", timeout: "transport" };

const BY_STATUS: Record<number, string> = {
  400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
  405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type",
  421: "misdirected_request", 429: "too_many_requests", 431: "request_header_fields_too_large",
  500: "internal", 501: "not_implemented", 503: "unavailable",
};

/**
 * Every error the client throws.  `code` is the server's error code
 * ("held", "lost", "forbidden", ...) or a local one: "expired" (the safe
 * time ran out; also lost), "released", "ended" (a session handle after
 * its end()), "connect" (no URL accepted a connection: nothing was sent),
 * "timeout" (sent, no answer: the outcome is unknown), "transport",
 * "protocol", "invalid".  Use `is(kind)`.  "too_many_requests" (429: this
 * address has as many blocking acquires waiting as the server allows) and
 * "unavailable" (503) carry the server's Retry-After in `retryAfterMs`;
 * "misdirected_request" (421) says the server does not answer to the host
 * name of the URL (with authentication off it serves only localhost, IP
 * addresses, its --listen host and --allow-host names).
 */
export class TenureError extends Error {
  readonly code: string;
  /** The HTTP status when the server answered, else 0. */
  readonly status: number;
  /** Who holds the name (code "held"). */
  readonly holder?: LeaseInfo;
  /** How long the lock delay still lasts (code "lock_delay"), or the server's Retry-After (429, 503). */
  readonly retryAfterMs?: number;

  constructor(code: string, message: string, opts: { status?: number; holder?: LeaseInfo; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message || code, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = "TenureError";
    this.code = code;
    this.status = opts.status ?? 0;
    this.holder = opts.holder;
    this.retryAfterMs = opts.retryAfterMs;
  }

  /** Whether this error is of kind (an expired lease is also "lost"; connect and timeout are also "transport"). */
  is(kind: string): boolean {
    const base = this.status && !KNOWN.has(this.code) ? (BY_STATUS[this.status] ?? this.code) : this.code;
    for (let k: string | undefined = base; k; k = PARENT[k]) {
      if (k === kind) return true;
    }
    return false;
  }

  override toString(): string {
    return `tenure: ${this.code}${this.status ? ` (HTTP ${this.status})` : ""}: ${this.message}`;
  }
}

const KNOWN = new Set(["bad_request", "unauthorized", "forbidden", "not_found", "method_not_allowed",
  "held", "lost", "lock_delay", "payload_too_large", "unsupported_media_type", "misdirected_request",
  "request_header_fields_too_large", "too_many_requests", "unavailable", "internal", "not_implemented"]);

export function infoOf(j: Record<string, unknown>): LeaseInfo {
  return {
    name: typeof j.name === "string" ? j.name : "",
    ownerId: typeof j.owner_id === "string" ? j.owner_id : "",
    token: typeof j.token === "number" ? j.token : 0,
    expiresInMs: typeof j.expires_in_ms === "number" && j.expires_in_ms > 0 ? j.expires_in_ms : 0,
  };
}

/**
 * The error of an answer: its status, parsed body (may be empty), the
 * Retry-After it carried (ms, 0 when none) and the host name the request
 * named.
 */
export function fromAnswer(status: number, body: Record<string, unknown>, retryAfterMs = 0, host = ""): TenureError {
  const code = typeof body.error === "string" ? body.error : (BY_STATUS[status] ?? `http_${status}`);
  let msg = typeof body.message === "string" ? body.message : `HTTP ${status}`;
  if (code === "misdirected_request") msg += ` (this client named it "${host}": use an IP address or a name tenured allows)`;
  const holder = code === "held" && body.holder && typeof body.holder === "object"
    ? infoOf(body.holder as Record<string, unknown>) : undefined;
  const retry = typeof body.retry_after_ms === "number" ? body.retry_after_ms : retryAfterMs > 0 ? retryAfterMs : undefined;
  return new TenureError(code, msg, { status, holder, retryAfterMs: retry });
}

/** Retry-After in ms: delay-seconds only (tenured sends no dates); 0 when absent or not a number. */
export function retryAfterOf(v: string | null): number {
  if (v === null || !/^\s*\d+\s*$/.test(v)) return 0;
  const s = Number(v);
  return s > 0 && s < 86_400 ? s * 1000 : 0;
}

export function local(code: string, message: string, cause?: unknown): TenureError {
  return new TenureError(code, message, { cause });
}
