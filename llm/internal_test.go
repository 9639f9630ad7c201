package llm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header map[string]string
		want   time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "1"}, time.Second},
		{map[string]string{"Retry-After": " 30 "}, 30 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After": "0"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "junk", "Retry-After": "2"}, 2 * time.Second},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := parseRetryAfter(h, now); got != tc.want {
			t.Errorf("parseRetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestBackoffBoundsAndSeededJitter(t *testing.T) {
	cfg, err := Config{BaseURL: "http://127.0.0.1:9/v1", Model: "m", RetryBaseDelay: 100 * time.Millisecond, RetryMaxDelay: time.Second, Concurrency: 1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(cfg)
	for n := 1; n <= 8; n++ {
		full := min(100*time.Millisecond<<(n-1), time.Second)
		da, db := a.backoff(n), b.backoff(n)
		if da < full/2 || da > full {
			t.Errorf("backoff(%d) = %v, want in [%v, %v]", n, da, full/2, full)
		}
		if da != db {
			t.Errorf("backoff(%d): two clients with one config drew %v and %v; the jitter source must be seeded", n, da, db)
		}
	}
}

func TestServerMessage(t *testing.T) {
	cases := map[string]string{
		`{"error":{"message":"Invalid model","type":"invalid_request_error"}}`: "Invalid model",
		`{"error":"model not found"}`:                                          "model not found",
		`{"message":"nope"}`:                                                   "nope",
		`{"detail":"Not Found"}`:                                               "Not Found",
		`{"detail":[{"loc":["body"],"msg":"bad"}]}`:                            `[{"loc":["body"],"msg":"bad"}]`,
		"<html>\n  <h1>Bad   Gateway</h1>\n</html>":                            "<html> <h1>Bad Gateway</h1> </html>",
		"":                        "",
		strings.Repeat("x", 1000): strings.Repeat("x", 300) + "…",
	}
	for body, want := range cases {
		if got := serverMessage([]byte(body)); got != want {
			t.Errorf("serverMessage(%.40q) = %q, want %q", body, got, want)
		}
	}
}

func FuzzServerMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"x"}}`))
	f.Add([]byte(`{"error":`))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, body []byte) {
		msg := serverMessage(body)
		if len(msg) > 400 {
			t.Errorf("message of %d bytes", len(msg))
		}
		if utf8.Valid(body) && !utf8.ValidString(msg) {
			t.Errorf("invalid UTF-8 from valid input: %q", msg)
		}
	})
}

func TestNormalizeBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000/v1":   "http://127.0.0.1:8000/v1",
		"http://127.0.0.1:8000/v1/":  "http://127.0.0.1:8000/v1",
		" https://API.Example/v1// ": "https://api.example/v1",
		"http://localhost:11434":     "http://localhost:11434",
	} {
		got, err := normalizeBaseURL(in)
		if err != nil || got != want {
			t.Errorf("normalizeBaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestCacheKeyCoversEveryParameter(t *testing.T) {
	base := keyRequest{BaseURL: "http://h/v1", Model: "m", Messages: []Message{{Role: "user", Content: "x"}}}
	seed0, seed1 := int64(0), int64(1)
	temp0, temp1 := 0.0, 0.1
	variants := []keyRequest{base}
	for _, mod := range []func(*keyRequest){
		func(k *keyRequest) { k.BaseURL = "http://h2/v1" },
		func(k *keyRequest) { k.Model = "m2" },
		func(k *keyRequest) { k.Messages = []Message{{Role: "system", Content: "x"}} },
		func(k *keyRequest) { k.Messages = []Message{{Role: "user", Content: "x "}} },
		func(k *keyRequest) { k.Temperature = &temp0 },
		func(k *keyRequest) { k.Temperature = &temp1 },
		func(k *keyRequest) { k.MaxCompletionTokens = 5 },
		func(k *keyRequest) { k.Seed = &seed0 },
		func(k *keyRequest) { k.Seed = &seed1 },
		func(k *keyRequest) { k.Tools = []Tool{{Name: "f", Parameters: emptyParameters}} },
		func(k *keyRequest) { k.Tools = []Tool{{Name: "f", Description: "d", Parameters: emptyParameters}} },
		func(k *keyRequest) { k.Tools = []Tool{{Name: "g", Parameters: emptyParameters}} },
		func(k *keyRequest) { k.Tools = []Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}} },
		func(k *keyRequest) {
			k.Messages = []Message{{Role: "user", Content: "x"}, {Role: "assistant", ToolCalls: []ToolCall{{ID: "1", Name: "f", Arguments: "{}"}}}}
		},
		func(k *keyRequest) {
			k.Messages = []Message{{Role: "user", Content: "x"}, {Role: "assistant", ToolCalls: []ToolCall{{ID: "1", Name: "f", Arguments: "{ }"}}}}
		},
		func(k *keyRequest) { k.Messages = []Message{{Role: "tool", Content: "x", ToolCallID: "1"}} },
		func(k *keyRequest) { k.Messages = []Message{{Role: "tool", Content: "x", ToolCallID: "2"}} },
	} {
		k := base
		mod(&k)
		variants = append(variants, k)
	}
	seen := map[string]int{}
	for i, v := range variants {
		key, _ := cacheKey(v)
		if j, dup := seen[key]; dup {
			t.Errorf("variants %d and %d share key %s", j, i, key)
		}
		seen[key] = i
	}
	if k1, _ := cacheKey(base); k1 != func() string { k, _ := cacheKey(base); return k }() {
		t.Error("key is not deterministic")
	}
	// Pinned before tool calling was added: keys of requests without tools
	// that send temperature 0 (every request did until issue 27) must
	// stay byte-identical, or existing cache files stop replaying with
	// --llm-temperature 0. A request without a temperature (the default
	// now) has a key of its own.
	const pinned = "c5fca1269c7def9ec7e5b71ecd701be796118272bd8c3b06461c2b096dc5ceb2"
	if k, _ := cacheKey(base); k == pinned {
		t.Error("a request sending no temperature has the key of one sending 0")
	}
	zero := base
	zero.Temperature = &temp0
	if k, canonical := cacheKey(zero); k != pinned || canonical != `{"base_url":"http://h/v1","model":"m","messages":[{"role":"user","content":"x"}],"temperature":0}` {
		t.Errorf("key of a request without tools changed: %s %s", k, canonical)
	}
}
