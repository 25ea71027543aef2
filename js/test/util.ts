// SPDX-License-Identifier: MIT
// Small helpers the client tests share.

import assert from "node:assert/strict";
import { TenureError } from "../src";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The code of the TenureError p rejects with, or "ok" when it resolves;
 * any other error fails the test. */
export const code = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof TenureError, String(e));
    return e.code;
  }
  return "ok";
};

/** What the body of a hold or holdSession that runs until it is told to stop
 * waits on: at most 30 s for signal to abort, then seen() and a rejection
 * with the signal's reason. */
export const untilAborted = (signal: AbortSignal, seen: () => void): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, 30_000);
    signal.addEventListener("abort", () => { seen(); clearTimeout(t); reject(signal.reason); }, { once: true });
  });
