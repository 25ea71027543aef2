// SPDX-License-Identifier: MIT
// tenure-client: the client of the tenure lease service and its fences
// (docs/JS.md).
export { Client, ClientOptions, AcquireOptions, HoldBody, HoldSessionBody } from "./client";
export { CheckResult } from "./check";
export { LeaseInfo, TenureError } from "./errors";
export { EventStream, EventOptions, TenureEvent } from "./events";
export { Lease } from "./lease";
export {
  BATCH_NAMES, Claim, ClaimOptions, LeaseEndListener, Session, SessionAcquireOptions, SessionEndListener, SessionInfo,
  SessionOptions,
} from "./session";
export * as fence from "./fence";
export * as share from "./share";
