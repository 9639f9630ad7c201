package stubmodel

import (
	"net/http"
	"strings"
	"testing"
)

func TestPoliciesNew(t *testing.T) {
	mk := func(name string) Policy {
		return Policy{Name: name, New: func(Options) (http.Handler, func() string) {
			return Handler(Echo), func() string { return name + " served" }
		}}
	}
	ps := Policies{mk("a"), mk("b"), mk("c")}
	h, served, err := ps.New("b", Options{})
	if err != nil || h == nil || served() != "b served" {
		t.Fatalf("New(b): handler %v, err %v", h, err)
	}
	_, _, err = ps.New("d", Options{})
	if err == nil || !strings.Contains(err.Error(), `unknown stub policy "d" (want a, b or c)`) {
		t.Errorf("New(d): %v", err)
	}
	if _, _, err := (Policies{mk("a")}).New("x", Options{}); err == nil || !strings.Contains(err.Error(), "(want a)") {
		t.Errorf("one policy: %v", err)
	}
}
