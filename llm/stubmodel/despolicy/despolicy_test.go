package despolicy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

func TestPolicies(t *testing.T) {
	ps := despolicy.Policies()
	names := []string{"builtin", "random", "faults"}
	if len(ps) != len(names) {
		t.Fatalf("%d policies, want %d", len(ps), len(names))
	}
	for i, p := range ps {
		if p.Name != names[i] {
			t.Errorf("policy %d is %q, want %q", i, p.Name, names[i])
		}
		h, served := p.New(stubmodel.Options{})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader("{")))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: a malformed request got %d, want 400", p.Name, rec.Code)
		}
		if got := served(); got != "map[bad_request:1]" {
			t.Errorf("%s: summary %q, want the Log of one bad request", p.Name, got)
		}
	}
	if _, err := despolicy.New("oracle"); err == nil || !strings.Contains(err.Error(), "builtin, random or faults") {
		t.Errorf("New(oracle): %v", err)
	}
}
