package lsp

import "errors"

// Status is the one word every answer carries about how far it can be
// trusted: on SettleResult (diagnostics) and on Answer (navigation). A
// caller that shows an answer to a person or an agent says "no
// diagnostics" or "found no references" only for StatusComplete; for the
// others it says what the detail (SettleResult.Reason, Answer.Reason)
// says. Callers in other languages get it as the "status" field of the
// JSON of either type.
type Status string

// The statuses. The zero value "" means the answer carries none (an
// operation that failed before it could say).
const (
	// StatusComplete: the server's final answer for the document as it
	// is (diagnostics known current; navigation asked when the server
	// was not loading).
	StatusComplete Status = "complete"
	// StatusPartial: the server answered, but was still at work: loading
	// the workspace, or analysing the document (a Settle that timed out
	// after the server had reported on the document; a work-done
	// progress that stopped reporting and was not waited for). The
	// detail says what it was doing and how far.
	StatusPartial Status = "partial"
	// StatusUnknown: no answer in time; the detail names the server and
	// how long was waited. Nothing is known: not "no errors".
	StatusUnknown Status = "unknown"
	// StatusServerDown: the server failed (the error is a *ServerError,
	// whose text ends with the tail of the server's stderr).
	StatusServerDown Status = "server-down"
)

// statusOfErr is StatusServerDown for a server's failure, else "".
func statusOfErr(err error) Status {
	var se *ServerError
	if errors.As(err, &se) || errors.Is(err, ErrServerExited) {
		return StatusServerDown
	}
	return ""
}
