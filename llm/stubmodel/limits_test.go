package stubmodel

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request body over MaxRequestBody is answered 400, read no further
// than the bound: a client cannot make the stub hold any body it sends.
func TestRequestBodyBounded(t *testing.T) {
	srv := httptest.NewServer(Handler(nil))
	defer srv.Close()
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", MaxRequestBody) + `"}]}`
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "larger than") {
		t.Errorf("an oversized body: %s %.200s; want 400 naming the bound", resp.Status, b)
	}
	resp, err = http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a small body: %s, want 200", resp.Status)
	}
}
