package despolicy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel/despolicy"
)

func TestPolicies(t *testing.T) {
	ps := despolicy.Policies()
	if len(ps) != len(despolicy.Names) {
		t.Fatalf("%d policies, %d names", len(ps), len(despolicy.Names))
	}
	for i, p := range ps {
		if p.Name != despolicy.Names[i] {
			t.Errorf("policy %d is %q, want %q", i, p.Name, despolicy.Names[i])
		}
		h, served := p.New()
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
