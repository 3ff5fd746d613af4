package setting

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a setting that cannot be used.
type Error struct {
	// Name is the setting's canonical name, e.g. "requeue-pending".
	Name string
	// Problem says what is wrong and what would be right.
	Problem string
}

func (e *Error) Error() string { return e.Name + ": " + e.Problem }

// Errorf is an *Error of setting name.
func Errorf(name, format string, args ...any) error {
	return &Error{Name: name, Problem: fmt.Sprintf(format, args...)}
}

// Flags spells the settings of err (one error, or several joined) as the
// command-line flags of the same names: "--requeue-pending: must not be
// negative". Other errors are kept as they are.
func Flags(err error) error {
	if err == nil {
		return nil
	}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) && !isSetting(err) {
		var lines []string
		for _, e := range joined.Unwrap() {
			lines = append(lines, Flags(e).Error())
		}
		return errors.New(strings.Join(lines, "\n"))
	}
	var se *Error
	if errors.As(err, &se) {
		return fmt.Errorf("--%s: %s", se.Name, se.Problem)
	}
	return err
}

func isSetting(err error) bool {
	_, ok := err.(*Error)
	return ok
}
