// SPDX-License-Identifier: MIT

// Package tenure is the Go client of tenured, the lease (distributed lock)
// service with fencing tokens: the same semantics as libtenure and the
// Python client (docs/CLIENT.md, docs/PYTHON.md, docs/GO.md).
//
// A worker acquires a named lease and gets a fencing token; it stamps every
// write with the token, and the sink admits a write only if its token is
// at least the highest it has seen for the resource (package
// tenure/fence, in the write's own transaction).  Lease.SafeFor tells how
// long it is still safe to act as the holder: the time left of the last
// successful acquire or renew, counted on the monotonic clock from the
// instant that request was sent, minus a safety margin (a tenth of the TTL
// by default).  Client.Hold keeps a lease alive while a function runs and
// cancels the function's context when the lease is lost.
//
// Only the standard library is used.
package tenure
