package llmctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/testenv"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// A des LLM run whose model answers one call with 3 MiB costs the run
// directory at most that reply's size plus 64 KiB over the same run with a
// short unusable reply there (issue 31): decisions.jsonl keeps the reply's
// first untrusted.MaxReply bytes with raw_len, raw_sha256 and
// raw_truncated, and nothing else in the directory holds it (the response
// cache, when there is one, keeps it whole).
func TestLongReplyCostsItsSizeAtMost(t *testing.T) {
	const size, overhead = 3 << 20, 64 << 10
	p := plant(t, "A3C9-1")
	mode := coord.HeterarchicalCNP()
	// The agent of the first decision, from the rule controller's run: the
	// one whose first call gets the long reply, in both runs below.
	var rule bytes.Buffer
	harness.Run(context.Background(), harness.Episode{Plant: p, Seed: 11, Mode: mode, Controller: policy.Rule{}, Decisions: &rule})
	var first struct {
		AgentID string `json:"agent_id"`
	}
	if err := json.Unmarshal(bytes.SplitN(rule.Bytes(), []byte("\n"), 2)[0], &first); err != nil || first.AgentID == "" {
		t.Fatalf("the rule run's first decision: %v", err)
	}
	long := strings.Repeat("Let me weigh every option. ", size/27+1)[:size]
	run := func(odd string) (int64, string) {
		var done atomic.Bool
		srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
			v, err := llmctl.ParseView(req.Messages[len(req.Messages)-1].Content)
			if err != nil {
				return stubmodel.Status(400, err.Error())
			}
			if v.AgentID == first.AgentID && done.CompareAndSwap(false, true) {
				return stubmodel.Text(odd)
			}
			a, _ := policy.Rule{}.Act(context.Background(), &coord.Decision{ActiveAgents: map[string]*coord.View{v.AgentID: v}})
			return stubmodel.Text(`{"action": ` + strconv.Itoa(a[v.AgentID]) + `}`)
		})
		defer srv.Close()
		c := controller(t, llm.Config{BaseURL: srv.URL + "/v1", Model: "long", Concurrency: 4}, "graph")
		dir := t.TempDir()
		if _, err := harness.RunToDir(context.Background(), harness.Episode{Plant: p, Seed: 11, Mode: mode, Controller: c}, dir); err != nil {
			t.Fatal(err)
		}
		return testenv.DirBytes(t, dir), dir
	}
	base, _ := run("no idea")
	got, dir := run(long)
	t.Logf("run directory %d bytes, %d with a short reply instead of the %d-byte one", got, base, size)
	if got > base+size+overhead {
		t.Errorf("run directory %d bytes, %d with a short reply: the %d-byte reply costs more than its size + %d", got, base, size, overhead)
	}
	dec, err := os.ReadFile(filepath.Join(dir, harness.FileDecisions))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dec, []byte(`"raw_len":3145728,`)) || !bytes.Contains(dec, []byte(`"raw_truncated":true`)) {
		t.Error("decisions.jsonl does not describe the long reply (raw_len, raw_truncated)")
	}
}
