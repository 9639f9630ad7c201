package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/play"
)

// goldenPlain holds every file (but timing.jsonl and the run databases)
// of two small plain suites as the code wrote them before mixed teams and
// the consensus helper existed: scripted teams with their merged
// baselines, and LLM agents of one model against the silo-gather stub.
// Rewrite it only for a deliberate change of plain runs' artifacts
// (COORDBENCH_UPDATE_GOLDEN=1 go test ./silo/suite -run TestPlainSuitesUnchanged).
const goldenPlain = "testdata/plain_suites.json"

// stubURL stands for the stub server's address in the golden files.
const stubURL = "http://STUB/v1"

// TestPlainSuitesUnchanged: suites without a mixed team or the consensus
// scaffold write byte for byte what they wrote before those existed.
func TestPlainSuitesUnchanged(t *testing.T) {
	srv := stubmodel.NewServer(silogather.Model{Solve: silogather.PromptSolver}.Handle)
	defer srv.Close()
	url := srv.URL + "/v1"
	l, err := play.NewLLMAgent(play.LLMConfig{Model: llm.Spec{Endpoint: llm.Endpoint{Model: "stub", BaseURL: url}}, MaxModelFailures: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, opt := range map[string]Options{
		"builtin": {Tasks: "I-01", Agents: "2", Protocols: "all", Agent: "reference,tree", MaxRounds: 30},
		"llm":     {Tasks: "I-01", Agents: "2", Protocols: "p2p,sfs", Agent: "llm", NoBaseline: true, LLM: l},
	} {
		s, err := Resolve(opt)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if rep, err := Run(context.Background(), s, dir, RunOptions{Workers: 4}); err != nil || len(rep.Failures) > 0 {
			t.Fatalf("%s: %v %+v", name, err, rep.Failures)
		}
		for rel, b := range files(t, dir) {
			got[name+"/"+filepath.ToSlash(rel)] = strings.ReplaceAll(string(b), url, stubURL)
		}
	}
	if os.Getenv("COORDBENCH_UPDATE_GOLDEN") == "1" {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(goldenPlain, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(goldenPlain)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: no longer written", name)
		} else if !bytes.Equal([]byte(g), []byte(want[name])) {
			t.Errorf("%s differs from what plain suites wrote before", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: a new file in a plain suite", name)
		}
	}
}
