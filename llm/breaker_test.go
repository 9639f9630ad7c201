package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coordbench/coordbench/llm"
)

// TestBreakerStopsHammeringADeadEndpoint: an endpoint that answers every
// request with 503 (or hangs: same class of failure) opens the breaker
// after BreakerThreshold attempts in a row; the call and the next ones
// then fail at once (class "server", the reason naming the breaker)
// without sending requests;
// after the cooldown, a recovered endpoint answers again.
func TestBreakerStopsHammeringADeadEndpoint(t *testing.T) {
	var down atomic.Bool
	var requests atomic.Int64
	down.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if down.Load() {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`))
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", MaxAttempts: 10,
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: 2 * time.Millisecond,
		BreakerThreshold: 3, BreakerCooldown: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
	var e *llm.Error
	if !errors.As(err, &e) || e.Class != llm.ClassServer || !strings.Contains(e.Reason, "circuit breaker") || e.Attempts != 4 || requests.Load() != 3 {
		t.Fatalf("first call: %v (class %q, attempts %d), %d requests; want the breaker after 3 requests", err, llm.ErrorClass(err), e.Attempts, requests.Load())
	}
	for range 5 {
		_, err = c.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "again"}})
		if !strings.Contains(fmt.Sprint(err), "circuit breaker") {
			t.Fatalf("while open: %v", err)
		}
	}
	if requests.Load() != 3 {
		t.Fatalf("%d requests sent while the breaker was open", requests.Load()-3)
	}
	down.Store(false)
	for {
		resp, err := c.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "later"}})
		if err == nil {
			if resp.Content != "ok" {
				t.Fatalf("after recovery: %+v", resp)
			}
			break
		}
		if !strings.Contains(err.Error(), "circuit breaker") {
			t.Fatalf("after recovery: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // the cooldown is wall-clock; no assertion on how long it took
	}
	// A 4xx is an answer: the endpoint is up, the breaker stays closed.
	var n404 atomic.Int64
	s404 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n404.Add(1)
		http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusNotFound)
	}))
	defer s404.Close()
	c4, err := llm.New(llm.Config{BaseURL: s404.URL + "/v1", Model: "m", BreakerThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c4.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "x"}}); llm.ErrorClass(err) != llm.ClassRequest {
			t.Fatalf("404: %v", err)
		}
	}
	if n404.Load() != 3 {
		t.Fatalf("404 endpoint saw %d requests, want 3", n404.Load())
	}
}
