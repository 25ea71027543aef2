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
