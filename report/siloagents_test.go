package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentsUsageTable: the per-agent table sums timing.jsonl by agent
// beside result.json's usage; a run without model-backed agents has none,
// and a timing line naming an agent outside the team is an error.
func TestAgentsUsageTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("result.json", `{"task":"I-01","n":2,"protocol":"p2p","agents":[
		{"agent_id":0,"usage":{"model_calls":3,"input_tokens":300,"output_tokens":30,"wasted_calls":1,"model_errors":0,"max_context_tokens":120}},
		{"agent_id":1,"usage":{"model_calls":2,"input_tokens":200,"output_tokens":20,"wasted_calls":0,"model_errors":1,"max_context_tokens":110}}]}`)
	write("timing.jsonl", `{"round":1,"agent":0,"latency_ms":10.5,"attempts":1,"cached":false}
{"round":1,"agent":1,"latency_ms":20,"attempts":3,"cached":false}
{"round":2,"agent":0,"latency_ms":0.5,"attempts":0,"cached":true}
{"round":2,"agent":1,"latency_ms":5,"attempts":2,"cached":false}
{"round":3,"agent":0,"latency_ms":4,"attempts":1,"cached":false}
`)
	r, err := readSiloRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	tab, ok, err := r.agentsUsageTable()
	if err != nil || !ok || len(tab.Rows) != 2 {
		t.Fatalf("table %+v ok %v err %v", tab, ok, err)
	}
	got := func(row int) string {
		var s []string
		for _, c := range tab.Rows[row] {
			s = append(s, c.Text)
		}
		return strings.Join(s, " ")
	}
	if g := got(0); g != "0 – 3 300 30 1 0 120 0 1 15" {
		t.Errorf("agent 0: %s", g)
	}
	if g := got(1); g != "1 – 2 200 20 0 1 110 3 0 25" {
		t.Errorf("agent 1: %s", g)
	}
	write("timing.jsonl", `{"round":1,"agent":2,"latency_ms":1,"attempts":1}`+"\n")
	if _, _, err := r.agentsUsageTable(); err == nil || !strings.Contains(err.Error(), "timing.jsonl:1") {
		t.Errorf("agent outside the team: %v", err)
	}
	write("result.json", `{"task":"I-01","n":1,"protocol":"p2p","agents":[{"agent_id":0}]}`)
	os.Remove(filepath.Join(dir, "timing.jsonl"))
	if r, err = readSiloRun(dir); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.agentsUsageTable(); ok || err != nil {
		t.Errorf("scripted agents: ok %v err %v", ok, err)
	}
}
