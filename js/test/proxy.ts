// SPDX-License-Identifier: MIT
// An HTTP proxy in front of a real tenured, for the tests: it forwards
// every request and records what the client sent (method, path, headers);
// it can hold each answer back for a while (a slow network) or, once,
// forward a request and answer 503 instead of the server's answer (a
// success the client never hears of, as a PostgreSQL store's broken
// commit).

import { IncomingHttpHeaders, Server, createServer } from "node:http";

export interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export class Proxy {
  readonly seen: Seen[] = [];
  delayMs = 0;
  #hide?: (s: Seen) => boolean;
  #srv: Server;

  private constructor(readonly target: string) {
    this.#srv = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (d: Buffer) => chunks.push(d));
      req.on("end", () => void this.#forward(req.method ?? "GET", req.url ?? "/", req.headers, Buffer.concat(chunks))
        .then(async ([status, body]) => {
          if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
          res.writeHead(status, { "content-type": "application/json" });
          res.end(body);
        }, (e) => {
          res.writeHead(502);
          res.end(String(e));
        }));
    });
  }

  static async start(target: string): Promise<Proxy> {
    const p = new Proxy(target);
    await new Promise<void>((r) => p.#srv.listen(0, "127.0.0.1", r));
    return p;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#srv.address() as { port: number }).port}`;
  }

  /** The next request matching p is forwarded, but answered 503. */
  hideOnce(p: (s: Seen) => boolean): void {
    this.#hide = p;
  }

  async #forward(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer): Promise<[number, string]> {
    const s: Seen = { method, path, headers };
    this.seen.push(s);
    const r = await fetch(this.target + path, { method, body: body.length > 0 ? body : undefined,
      headers: headers["content-type"] ? { "content-type": headers["content-type"] } : {} });
    let text = await r.text();
    let status = r.status;
    if (this.#hide?.(s)) {
      this.#hide = undefined;
      status = 503;
      text = '{"error":"unavailable","message":"the commit\'s outcome is unknown"}';
    }
    return [status, status === 204 ? "" : text];
  }

  close(): void {
    this.#srv.closeAllConnections();
    this.#srv.close();
  }
}
