package play

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

// TestRunWritesTheRunDirectory plays a reference team and checks the
// files of the run directory and that the returned bytes are result.json's.
func TestRunWritesTheRunDirectory(t *testing.T) {
	in, err := task.Seeded("I-01", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, b, err := Run(context.Background(), in, proto.P2P, Players{Kind: "reference"}, Limits{MaxRounds: 10}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.S != 1 {
		t.Errorf("reference team: success %v, S %v; want a solved run", res.Success, res.S)
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, FileResult))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, b) {
		t.Errorf("Run returned %d bytes, %s holds %d other bytes", len(b), FileResult, len(onDisk))
	}
	for _, f := range []string{FileDB, FileCalls} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: want a non-empty file (err %v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, llmagent.FileTurns)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a scripted team wrote %s (err %v)", llmagent.FileTurns, err)
	}
}

func TestRunRefusesLLMWithoutModel(t *testing.T) {
	in, err := task.Seeded("I-01", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Players{{Kind: AgentLLM}, {Kind: AgentLLM, LLM: &LLMAgent{Model: "m"}}} {
		if _, _, err := Run(context.Background(), in, proto.P2P, p, Limits{MaxRounds: 3}, t.TempDir()); !errors.Is(err, ErrNoModel) {
			t.Errorf("players %+v: got %v, want ErrNoModel", p, err)
		}
	}
}

func TestLabel(t *testing.T) {
	for _, c := range []struct {
		p    Players
		want string
	}{
		{Players{Kind: "tree"}, "tree"},
		{Players{Kind: AgentLLM, LLM: &LLMAgent{Model: "qwen3-8b"}}, "llm-qwen3-8b"},
		{Players{Kind: AgentLLM, LLM: &LLMAgent{Model: "qwen3-8b", Name: "small"}}, "llm-small"},
		{Players{Kind: AgentLLM, LLM: &LLMAgent{Model: "m", Config: llmagent.Config{Native: true,
			Scaffold: llmagent.Scaffold{Planning: true, Scratchpad: true}}}}, "llm-m+planning+scratchpad+native"},
	} {
		if got := c.p.Label(); got != c.want {
			t.Errorf("%+v: Label %q, want %q", c.p, got, c.want)
		}
	}
	// Names that differ only in replaced characters get different labels.
	a := (&LLMAgent{Model: "org/model"}).Label()
	b := (&LLMAgent{Model: "org:model"}).Label()
	if a == b || len(a) != len("llm-org-model-")+6 {
		t.Errorf("org/model → %q, org:model → %q; want llm-org-model-<6 hex>, different", a, b)
	}
}
