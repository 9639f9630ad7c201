package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// --reply-parsing: a model that always answers in a code fence decides
// every step by default and none under strict; the rule is in the
// manifest and, when not the default, in the case id, so a strict and a
// published suite in one directory never take each other's cases, and a
// case whose manifest names another rule is rerun.
func TestReplyParsingFlag(t *testing.T) {
	srv := stubmodel.NewServer(func(req stubmodel.ChatRequest) stubmodel.Reply {
		v, err := llmctl.ParseView(req.Messages[len(req.Messages)-1].Content)
		if err != nil {
			return stubmodel.Status(400, err.Error())
		}
		a, _ := policy.Rule{}.Act(context.Background(), &coord.Decision{ActiveAgents: map[string]*coord.View{v.AgentID: v}})
		return stubmodel.Text(fmt.Sprintf("```json\n{\"action\": %d}\n```", a[v.AgentID]))
	})
	defer srv.Close()
	dir := t.TempDir()
	suite := func(extra ...string) string {
		t.Helper()
		args := append([]string{"des", "suite", "--suite", "A3C9-1", "--paradigm", "centralized", "--seeds", "1", "--controller", "llm",
			"--llm-model", "m", "--llm-base-url", srv.URL + "/v1", "--out", dir}, extra...)
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	read := func(id string) (harness.Manifest, harness.Metrics) {
		t.Helper()
		var man harness.Manifest
		var m harness.Metrics
		for f, v := range map[string]any{harness.FileManifest: &man, harness.FileMetrics: &m} {
			if err := json.Unmarshal(mustRead(t, filepath.Join(dir, harness.SuiteCasesDir, id, f)), v); err != nil {
				t.Fatalf("%s/%s: %v", id, f, err)
			}
		}
		return man, m
	}
	const pub, strict = "A3C9-1__centralized__llm__m-graph__s1", "A3C9-1__centralized__llm__m-graph-strict__s1"

	suite()
	man, m := read(pub)
	if man.ReplyParsing != "published" || m.GFb != 0 || m.GLlm != m.Secondary.Decisions || m.GLlm == 0 {
		t.Errorf("published: reply_parsing %q, G_llm %d G_fb %d of %d", man.ReplyParsing, m.GLlm, m.GFb, m.Secondary.Decisions)
	}
	if d := mustRead(t, filepath.Join(dir, harness.SuiteCasesDir, pub, harness.FileDecisions)); !bytes.Contains(d, []byte(`"parse":"fenced_json"`)) {
		t.Error("published: the audits do not say the replies were fenced JSON")
	}
	pubManifest := mustRead(t, filepath.Join(dir, harness.SuiteCasesDir, pub, harness.FileManifest))

	suite("--reply-parsing", "strict")
	man, m = read(strict)
	if man.ReplyParsing != "strict" || m.GLlm != 0 || m.GFb != m.Secondary.Decisions {
		t.Errorf("strict: reply_parsing %q, G_llm %d G_fb %d of %d", man.ReplyParsing, m.GLlm, m.GFb, m.Secondary.Decisions)
	}
	if !bytes.Equal(pubManifest, mustRead(t, filepath.Join(dir, harness.SuiteCasesDir, pub, harness.FileManifest))) {
		t.Error("the strict suite touched the published case")
	}

	// A published case whose manifest names another rule is rerun.
	tampered := bytes.Replace(pubManifest, []byte(`"reply_parsing": "published"`), []byte(`"reply_parsing": "strict"`), 1)
	if bytes.Equal(tampered, pubManifest) {
		t.Fatalf("manifest has no reply_parsing line:\n%s", pubManifest)
	}
	if err := os.WriteFile(filepath.Join(dir, harness.SuiteCasesDir, pub, harness.FileManifest), tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	suite()
	if man, _ := read(pub); man.ReplyParsing != "published" {
		t.Errorf("a case recorded under strict was kept for a published suite")
	}

	// des case: the id names the rule; the flags must agree.
	caseArgs := []string{"des", "case", "--case-id", strict, "--llm-model", "m", "--llm-base-url", srv.URL + "/v1", "--out", filepath.Join(t.TempDir(), "c")}
	if _, err := run(t, caseArgs...); err == nil || !strings.Contains(err.Error(), "reply parsing") {
		t.Errorf("a strict case rerun under the published rule: %v", err)
	}
	if out, err := run(t, append(caseArgs, "--reply-parsing", "strict")...); err != nil {
		t.Errorf("des case --reply-parsing strict: %v\n%s", err, out)
	}
	if _, err := run(t, "des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", srv.URL+"/v1", "--reply-parsing", "lenient"); err == nil || !strings.Contains(err.Error(), "--reply-parsing") {
		t.Errorf("an unknown rule: %v", err)
	}
}
