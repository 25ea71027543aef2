// SPDX-License-Identifier: MIT

// The errors of the client: one type, *Error, whose Code is the server's
// error code ("held", "lost", ...) or a local one, and one sentinel per
// kind for errors.Is, as libtenure maps codes to TN_E* (docs/CLIENT.md).

package tenure

import (
	"fmt"
	"net/http"
	"time"
)

// Error is every error the client returns.  Use errors.Is with the
// sentinels below to tell kinds apart, and errors.As to read the details
// (Holder of a held name, RetryAfter of a lock delay).
type Error struct {
	// Code is the server's error code ("held", "lost", "forbidden", ...)
	// or a local one: "expired", "released", "connect", "timeout",
	// "transport", "protocol", "invalid".
	Code string
	// Status is the HTTP status when the server answered, else 0.
	Status int
	// Message is the server's message, or a local explanation.
	Message string
	// Holder is who holds the name (Code "held"), else nil.
	Holder *LeaseInfo
	// RetryAfter is how long the lock delay still lasts (Code
	// "lock_delay").
	RetryAfter time.Duration
	// Err is the underlying error of a local failure (a net or context
	// error), else nil.
	Err error

	kind string // what errors.Is compares: Code, or the status's kind
}

func (e *Error) Error() string {
	s := "tenure: " + e.Code
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil && e.Message == "" {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap gives the underlying net or context error of a local failure.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e is of the kind of target, a sentinel such as
// ErrHeld.  An expired lease is also lost, and a failed connection or a
// timeout is also a transport error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.kind == "" {
		return false
	}
	for k := e.kindOf(); k != ""; k = parentKind[k] {
		if k == t.kind {
			return true
		}
	}
	return false
}

func (e *Error) kindOf() string {
	if e.kind != "" {
		return e.kind
	}
	return e.Code
}

// parentKind: the kinds that are also another kind.
var parentKind = map[string]string{
	"expired": "lost",
	"connect": "transport",
	"timeout": "transport",
}

func sentinel(code string) *Error { return &Error{Code: code, kind: code} }

// The kinds of error, for errors.Is.  Server codes map one to one, as in
// libtenure and the Python client.
var (
	ErrBadRequest       = sentinel("bad_request")
	ErrUnauthorized     = sentinel("unauthorized")
	ErrForbidden        = sentinel("forbidden")
	ErrNotFound         = sentinel("not_found")
	ErrMethodNotAllowed = sentinel("method_not_allowed")
	ErrHeld             = sentinel("held")
	ErrLost             = sentinel("lost")
	ErrLockDelay        = sentinel("lock_delay")
	ErrPayloadTooLarge  = sentinel("payload_too_large")
	ErrUnsupportedMedia = sentinel("unsupported_media_type")
	ErrHeadersTooLarge  = sentinel("request_header_fields_too_large")
	ErrTooManyRequests  = sentinel("too_many_requests")
	ErrUnavailable      = sentinel("unavailable")
	ErrInternal         = sentinel("internal")

	// ErrExpired: the lease's safe time ran out before a renew succeeded
	// (a frozen process, a frozen server or a cut network); nothing was
	// sent.  errors.Is(err, ErrLost) is true too.
	ErrExpired = sentinel("expired")
	// ErrReleased: the lease was released through this handle (or ended
	// with its session's End).
	ErrReleased = sentinel("released")
	// ErrEnded: the session was ended through this handle (End).
	ErrEnded = sentinel("ended")
	// ErrTransport: no answer from a server.
	ErrTransport = sentinel("transport")
	// ErrConnect: no server URL accepted a connection; nothing was sent.
	ErrConnect = sentinel("connect")
	// ErrTimeout: the request was sent but no answer came in time; its
	// outcome is unknown (retry an acquire with the same RequestID).
	ErrTimeout = sentinel("timeout")
	// ErrProtocol: the answer was not what the API describes.
	ErrProtocol = sentinel("protocol")
	// ErrInvalid: an argument the client refuses before sending.
	ErrInvalid = sentinel("invalid")
)

// kindByStatus: the kind of an answer whose code the client does not know
// (a 503 "capacity" is unavailable, as a 503 "unavailable" is).
var kindByStatus = map[int]string{
	http.StatusBadRequest:                  "bad_request",
	http.StatusUnauthorized:                "unauthorized",
	http.StatusForbidden:                   "forbidden",
	http.StatusNotFound:                    "not_found",
	http.StatusMethodNotAllowed:            "method_not_allowed",
	http.StatusRequestEntityTooLarge:       "payload_too_large",
	http.StatusUnsupportedMediaType:        "unsupported_media_type",
	http.StatusTooManyRequests:             "too_many_requests",
	http.StatusRequestHeaderFieldsTooLarge: "request_header_fields_too_large",
	http.StatusInternalServerError:         "internal",
	http.StatusServiceUnavailable:          "unavailable",
}

var knownCodes = map[string]bool{
	"bad_request": true, "unauthorized": true, "forbidden": true,
	"not_found": true, "method_not_allowed": true, "held": true,
	"lost": true, "lock_delay": true, "payload_too_large": true,
	"unsupported_media_type": true, "request_header_fields_too_large": true,
	"too_many_requests": true, "unavailable": true, "internal": true,
}

// errorBody is {"error": code, "message": text, ...} of an error answer.
type errorBody struct {
	Error        string    `json:"error"`
	Message      string    `json:"message"`
	Holder       *infoJSON `json:"holder"`
	RetryAfterMs *int64    `json:"retry_after_ms"`
}

// fromAnswer makes the *Error of an error answer (status, parsed body).
func fromAnswer(status int, b *errorBody) *Error {
	e := &Error{Status: status, Code: b.Error, Message: b.Message}
	switch {
	case knownCodes[b.Error]:
		e.kind = b.Error
	case kindByStatus[status] != "":
		e.kind = kindByStatus[status]
	default:
		e.kind = fmt.Sprintf("http_%d", status)
	}
	if e.Code == "" {
		e.Code = e.kind
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	if b.Error == "held" && b.Holder != nil {
		h := b.Holder.info()
		e.Holder = &h
	}
	if b.RetryAfterMs != nil && *b.RetryAfterMs >= 0 {
		e.RetryAfter = time.Duration(*b.RetryAfterMs) * time.Millisecond
	}
	return e
}

// localErr makes a local *Error of a kind.
func localErr(code, format string, args ...any) *Error {
	return &Error{Code: code, kind: code, Message: fmt.Sprintf(format, args...)}
}
