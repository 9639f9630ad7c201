package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSiloSuiteMixedTeam: two coordbench llm stub instances (silo-gather
// and silo-hasty, on free loopback ports) are named with --llm-endpoint; a
// silo suite plays each model alone and both as a mixed team, and
// reports the team per model: the hasty model's agents submit
// prematurely, the gather model's do not; with the consensus scaffold the
// team succeeds.
func TestSiloSuiteMixedTeam(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gather, _, doneA := startStub(t, ctx, "--policy", "silo-gather")
	hasty, _, doneB := startStub(t, ctx, "--policy", "silo-hasty")
	models := []string{"--llm-endpoint", "name=g,model=stub-gather,base_url=" + gather,
		"--llm-endpoint", "name=h,model=stub-hasty,base_url=" + hasty + ",concurrency=2"}
	dir := t.TempDir()
	for _, sc := range []string{"none", "consensus"} {
		out := filepath.Join(dir, sc)
		args := append([]string{"silo", "suite", "--tasks", "I-01", "--agents", "4", "--protocols", "p2p,sfs", "--agent", "llm,team",
			"--team-shares", "g=1,h=1", "--scaffold", sc, "--no-baseline", "--out", out}, models...)
		stdout, err := run(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc, err, stdout)
		}
		if !strings.Contains(stdout, "by model (mixed teams)") {
			t.Errorf("%s: no table by model printed:\n%s", sc, stdout)
		}
		rows := csvRows(t, filepath.Join(out, "aggregate_models.csv"))
		col := func(name string) int { return slices.Index(rows[0], name) }
		if len(rows) != 1+2*2 {
			t.Fatalf("%s: %d rows", sc, len(rows))
		}
		for _, r := range rows[1:] {
			wantS := map[string]string{"g": "1.0000", "h": "0.0000"}[r[col("model")]]
			if sc == "consensus" {
				wantS = "1.0000"
			}
			if r[col("S_mean")] != wantS || r[col("agents")] != "2" {
				t.Errorf("%s: row %v", sc, r)
			}
			premature := r[col("premature_submission_rate")]
			if (sc == "none" && r[col("model")] == "h") != (premature == "1.0000") {
				t.Errorf("%s: model %s premature rate %s", sc, r[col("model")], premature)
			}
		}
		// The plain runs of each model ran beside the team.
		sum := csvRows(t, filepath.Join(out, "summary.csv"))
		var agents []string
		for _, r := range sum[1:] {
			agents = append(agents, r[5])
		}
		suffix := map[string]string{"none": "", "consensus": "+consensus"}[sc]
		for _, a := range []string{"llm-g", "llm-h", "llm-mix-g=1-h=1"} {
			if !slices.Contains(agents, a+suffix) {
				t.Errorf("%s: no runs of %s%s in %v", sc, a, suffix, agents)
			}
		}
	}
	cancel()
	for _, d := range []<-chan error{doneA, doneB} {
		if err := <-d; err != nil {
			t.Error(err)
		}
	}
}

// TestSiloTeamFlagErrors: the team flags' mistakes name the flag.
func TestSiloTeamFlagErrors(t *testing.T) {
	ep := []string{"--llm-endpoint", "name=a,model=x,base_url=http://127.0.0.1:1/v1", "--llm-endpoint", "name=b,model=y,base_url=http://127.0.0.1:1/v1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"silo", "suite", "--agents", "4", "--agent", "team", "--team", "a=3,b=2"}, ep...), "--team: the team a=3,b=2 has 5 agents (its counts' sum), not N = 4"},
		{append([]string{"silo", "suite", "--agents", "2", "--agent", "team", "--team-shares", "a=1,b=1,c=1"}, ep...), `--team-shares: no model "c"`},
		{append([]string{"silo", "suite", "--agents", "2", "--agent", "team", "--team-shares", "a=1,b=4"}, ep...), "--team-shares: at N = 2 the shares a=1,b=4 leave model a without an agent"},
		{append([]string{"silo", "suite", "--agent", "llm", "--team", "a=1,b=1"}, ep...), "--team given, but --agent does not include team"},
		{append([]string{"silo", "suite", "--agent", "team"}, ep...), "--agent team needs a mixed team"},
		{append([]string{"silo", "suite", "--agent", "team", "--team", "a=1", "--team-shares", "a=1"}, ep...), "a team has counts or shares, not both"},
		{append([]string{"silo", "run", "--agent", "llm"}, ep...), "--agent llm: 2 models given; a run plays one"},
		{append([]string{"silo", "run", "--agent", "team", "--team", "a=2,b=2", "--agents", "3"}, ep...), "--team: the team a=2,b=2 has 4 agents (its counts' sum), not N = 3"},
		{[]string{"silo", "run", "--agent", "reference", "--llm-endpoint", "name=a,model=x,base_url=http://127.0.0.1:1/v1"}, "--llm-endpoint given, but --agent does not include llm or team"},
		{[]string{"silo", "run", "--agent", "llm", "--llm-endpoint", "name=a,model=x"}, `--llm-endpoint "name=a,model=x": base_url: required`},
		{[]string{"silo", "run", "--agent", "llm", "--llm-endpoint", "name=a,model=x,base_url=http://h/v1,rpm=fast"}, `rpm: "fast" is not a number`},
		{[]string{"silo", "run", "--agent", "llm", "--llm-endpoint", "name=a,model=x,base_url=http://h/v1,colour=red"}, `unknown key "colour"`},
		{[]string{"silo", "run", "--agent", "llm", "--llm-endpoint", "name=a b,model=x,base_url=http://h/v1"}, `name: want at most 64 letters`},
		{append([]string{"silo", "run", "--agent", "team", "--team", "a=1,a=1"}, ep...), "--team: model a is named twice"},
	} {
		_, err := run(t, append(tc.args, "--out", filepath.Join(t.TempDir(), "x"))...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v:\n  error %v\n  want  %q", tc.args, err, tc.want)
		}
	}
}
