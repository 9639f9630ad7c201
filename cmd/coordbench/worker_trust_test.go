package main

import (
	"strings"
	"testing"

	"github.com/coordbench/coordbench/sweep"
)

// A worker refuses a served experiment that would send a key to an
// endpoint it was not allowed, or read a file outside --experiment-dir;
// loopback endpoints and allowed ones pass.
func TestWorkerTrust(t *testing.T) {
	exp := func(body string) *sweep.Experiment {
		t.Helper()
		e, err := sweep.Parse("exp.yaml", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	model := func(url string) *sweep.Experiment {
		return exp("benchmark: des\ndes:\n  instances: [A3C9-1]\n  controllers: [llm]\nmodels:\n  - name: m\n    model: m\n    base_url: " + url + "\n    api_key_env: SOME_KEY\n")
	}
	none, err := newWorkerTrust(nil)
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := newWorkerTrust([]string{"https://api.example.com/v1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"http://127.0.0.1:8089/v1", "http://localhost:8089/v1", "http://[::1]:8089/v1"} {
		if err := none.check(model(url)); err != nil {
			t.Errorf("loopback %s refused: %v", url, err)
		}
	}
	if err := none.check(model("https://attacker.example.net/v1")); err == nil || !strings.Contains(err.Error(), "--allow-endpoint") {
		t.Errorf("an endpoint not allowed: %v", err)
	}
	if err := allowed.check(model("https://api.example.com/v1")); err != nil {
		t.Errorf("an allowed endpoint refused: %v", err)
	}
	if err := allowed.check(model("https://api.example.com.attacker.net/v1")); err == nil {
		t.Error("a look-alike of an allowed endpoint passed")
	}
	for _, inst := range []string{"../secret.yaml", "/etc/passwd", "A3C9-1,../x.yaml"} {
		if err := none.check(exp("benchmark: des\ndes:\n  instances: [\"" + inst + "\"]\n")); err == nil || !strings.Contains(err.Error(), "outside --experiment-dir") {
			t.Errorf("instance %q: %v", inst, err)
		}
	}
	if err := none.check(exp("benchmark: des\ndes:\n  instances: [A3C9-1, \"gen:A4C8\", plants/mine.yaml]\n")); err != nil {
		t.Errorf("local instances refused: %v", err)
	}
	if _, err := newWorkerTrust([]string{"not a url"}); err == nil {
		t.Error("--allow-endpoint of a non-URL accepted")
	}
}
