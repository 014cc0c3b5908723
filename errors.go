// Package meridian is the domain of the Meridian metadata catalog: the kind registry,
// entity documents, entity references, change descriptions, FQN and entity-link parsing,
// application errors and the calling principal. It does no I/O.
package meridian

import (
	"errors"
	"fmt"
)

// Application error codes. Each maps to one HTTP status and one MCP statusCode at the edge.
const (
	EInvalid            = "invalid"
	EUnauthorized       = "unauthorized"
	EForbidden          = "forbidden"
	ENotFound           = "not_found"
	EConflict           = "conflict"
	EPreconditionFailed = "precondition_failed"
	ETooManyRequests    = "too_many_requests"
	EUnavailable        = "unavailable"
	EInternal           = "internal"
)

// Error is an application error: a code from the list above and a message safe to show
// to the caller. Internal details are logged, never put in Message.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an application error, EInternal for any other non-nil
// error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the message of an application error, and a generic text for any
// other error so that internal details never reach a caller.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error"
}

// HTTPStatus maps an error code to its HTTP status.
func HTTPStatus(code string) int {
	switch code {
	case EInvalid:
		return 400
	case EUnauthorized:
		return 401
	case EForbidden:
		return 403
	case ENotFound:
		return 404
	case EConflict:
		return 409
	case EPreconditionFailed:
		return 412
	case ETooManyRequests:
		return 429
	case EUnavailable:
		return 503
	case "":
		return 200
	}
	return 500
}

// NotFound returns the OpenMetadata-style not-found error for a kind and an id or FQN.
func NotFound(kind, key string) *Error {
	return Errorf(ENotFound, "%s instance for %s not found", kind, key)
}
