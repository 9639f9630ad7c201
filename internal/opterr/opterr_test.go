package opterr_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/coordbench/coordbench/internal/opterr"
)

func TestError(t *testing.T) {
	err := opterr.New("Seeds", "%q is not a seed: %w", "x", fs.ErrInvalid)
	if got, want := err.Error(), `Seeds: "x" is not a seed: invalid argument`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("suite: %w", &opterr.Error{Option: "Agents", Err: errors.New("not 3"), See: []string{"Mode", "Seeds"}})
	var oe *opterr.Error
	if !errors.As(wrapped, &oe) || oe.Option != "Agents" || wrapped.Error() != "suite: Agents: not 3 (see Mode, Seeds)" {
		t.Fatalf("errors.As %v: %q", oe, wrapped)
	}
	if !errors.Is(err, fs.ErrInvalid) || !errors.Is(opterr.Wrap("Suite", fs.ErrNotExist), fs.ErrNotExist) {
		t.Fatal("the wrapped error is lost")
	}
	if opterr.SeeText(nil) != "" {
		t.Fatal("SeeText of nothing")
	}
}
