// Package opterr is the error of a bad option value. A library names the
// option in its own terms (a field of its options struct such as "Seeds",
// or a parameter such as "dir") and says what is wrong with the value; a
// front end that sets the option another way (a command-line flag) finds
// the error with errors.As and names the option its own way.
package opterr

import (
	"fmt"
	"strings"
)

// Error is a bad value of Option. Its message is
//
//	<Option>: <Err>[ (see <See>, ...)]
type Error struct {
	// Option names the option as the library does: "Seeds", "BaseURL".
	Option string
	// Err says what is wrong with the value.
	Err error
	// See names other options of the same library that the remedy
	// involves ("Mode" for an N that only seeded instances have).
	See []string
}

func (e *Error) Error() string { return e.Option + ": " + e.Err.Error() + SeeText(e.See) }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// New returns the *Error of option with the message format (formatted as
// by fmt.Errorf, so %w wraps).
func New(option, format string, a ...any) error {
	return &Error{Option: option, Err: fmt.Errorf(format, a...)}
}

// Wrap returns err as the *Error of option.
func Wrap(option string, err error) error { return &Error{Option: option, Err: err} }

// SeeText is the message suffix that points at options: " (see A, B)",
// or "" for none.
func SeeText(options []string) string {
	if len(options) == 0 {
		return ""
	}
	return " (see " + strings.Join(options, ", ") + ")"
}
