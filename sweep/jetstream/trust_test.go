package jetstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/sweep"
)

// parseExperiment parses an experiment file's body.
func parseExperiment(t *testing.T, body string) *sweep.Experiment {
	t.Helper()
	e, err := sweep.Parse("exp.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A worker refuses a served experiment that would send a key to an
// endpoint it was not allowed, or read a file outside its experiment
// directory; loopback endpoints and allowed ones pass.
func TestTrust(t *testing.T) {
	model := func(url string) *sweep.Experiment {
		return parseExperiment(t, "benchmark: des\ndes:\n  instances: [A3C9-1]\n  controllers: [llm]\nmodels:\n  - name: m\n    model: m\n    base_url: "+url+"\n    api_key_env: SOME_KEY\n")
	}
	none, err := NewTrust(nil)
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := NewTrust([]string{"https://api.example.com/v1/"}) // normalised as the client does
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"http://127.0.0.1:8089/v1", "http://localhost:8089/v1", "http://[::1]:8089/v1", "stub:generic?seed=2"} {
		if err := none.Check(model(url)); err != nil {
			t.Errorf("loopback or in-process %s refused: %v", url, err)
		}
	}
	if err := none.Check(model("https://attacker.example.net/v1")); err == nil ||
		!strings.Contains(err.Error(), "does not call https://attacker.example.net/v1") || !strings.HasSuffix(err.Error(), "(see AllowEndpoints)") {
		t.Errorf("an endpoint not allowed: %v", err)
	}
	if err := allowed.Check(model("https://api.example.com/v1")); err != nil {
		t.Errorf("an allowed endpoint refused: %v", err)
	}
	if err := allowed.Check(model("https://api.example.com.attacker.net/v1")); err == nil {
		t.Error("a look-alike of an allowed endpoint passed")
	}
	for _, inst := range []string{"../secret.yaml", "/etc/passwd", "A3C9-1,../x.yaml"} {
		if err := none.Check(parseExperiment(t, "benchmark: des\ndes:\n  instances: [\""+inst+"\"]\n")); err == nil ||
			!strings.Contains(err.Error(), "outside the experiment directory") || !strings.HasSuffix(err.Error(), "(see ExperimentDir)") {
			t.Errorf("instance %q: %v", inst, err)
		}
	}
	if err := none.Check(parseExperiment(t, "benchmark: des\ndes:\n  instances: [A3C9-1]\n  paradigm_files: [../p.yaml]\n")); err == nil {
		t.Error("a paradigm file outside the experiment directory passed")
	}
	if err := none.Check(parseExperiment(t, "benchmark: des\ndes:\n  instances: [A3C9-1, \"gen:A4C8\", plants/mine.yaml]\n")); err != nil {
		t.Errorf("local instances refused: %v", err)
	}
	var oe *opterr.Error
	if _, err := NewTrust([]string{"not a url"}); !errors.As(err, &oe) || oe.Option != "AllowEndpoints" {
		t.Errorf("an allowed endpoint that is not a URL: %v", err)
	}
}
