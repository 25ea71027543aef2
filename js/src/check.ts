// SPDX-License-Identifier: MIT

/**
 * The answer of check: whether the token asked about is the live grant,
 * the live grant's token (null when the name is free), and the floor (the
 * highest token ever granted for the name, 0 if none: a sink may admit a
 * token only if it is at least the floor it knows).
 */
export interface CheckResult {
  current: boolean;
  live: boolean;
  token: number | null;
  floor: number;
}
