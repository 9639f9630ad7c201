package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
)

// The library's errors reach the user naming flags, not options.
func TestErrorsNameFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"des", "suite", "--limit", "-1"}, "--limit: must not be negative (got -1)"},
		{[]string{"des", "suite", "--seeds", "validation"}, `--seeds: "validation" is not a seed`},
		{[]string{"des", "suite", "--paradigm", ""}, "--paradigm: no paradigm given"},
		{[]string{"des", "suite", "--controller", "rule,oracle"}, `--controller: unknown controller "oracle"`},
		{[]string{"des", "case", "--case-id", "file-mine__centralized__rule__s1"}, "give the instance file (--instance FILE) or the suite directory (--suite-dir DIR)"},
		{[]string{"silo", "suite", "--mode", "official", "--agents", "3"}, "--agents: official instances exist for N in [2 5 10 20 50 100], not 3; seeded ones for any N (see --mode)"},
		{[]string{"silo", "suite", "--seeds", "5-2"}, `--seeds: "5-2" is not a seed range: want lo-hi with lo ≤ hi, e.g. 1-10`},
		{[]string{"silo", "suite", "--levels", "IV"}, `--levels: unknown level "IV"`},
		{[]string{"des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", "ftp://h/v1"}, `llm: config: --llm-base-url: scheme "ftp"`},
		{[]string{"des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", "http://u:p@h/v1"}, "(see --llm-api-key-env)"},
		{[]string{"silo", "suite", "--agent", "llm", "--llm-model", "m", "--llm-base-url", "http://h/v1", "--llm-cache-mode", "replay"}, `llm: config: --llm-cache: cache mode "replay" needs a cache`},
		// Go-internal texts replaced by what to do (issue 14).
		{[]string{"des", "run", "--seed", "-1"}, `invalid argument "-1" for "--seed" flag: "-1" is not a seed: seeds are whole numbers from 0 to 18446744073709551615`},
		{[]string{"silo", "run", "--seed", "-1"}, `"-1" is not a seed: seeds are whole numbers`},
		{[]string{"des", "suite", "--seeds", "1,-1"}, `--seeds: "-1" is not a seed: seeds are whole numbers`},
		{[]string{"des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", "127.0.0.1:8089/v1"}, "--llm-base-url: no scheme: give the API root with http:// or https:// in front, e.g. http://127.0.0.1:8000/v1"},
		{[]string{"des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", "localhost:8089/v1"}, "--llm-base-url: no scheme"},
		{[]string{"silo", "run", "--agents", "0"}, "--agents: task I-01: 0 agents, want 1 … 1000"},
		{[]string{"silo", "run", "--mode", "official", "--agents", "3"}, "--agents: official instances exist for N in [2 5 10 20 50 100], not 3; seeded ones for any N (see --mode)"},
		{[]string{"silo", "run", "--max-rounds", "0"}, "--max-rounds must be at least 1 (got 0)"},
		{[]string{"silo", "suite", "--max-rounds", "0"}, "--max-rounds must be at least 1 (got 0)"},
		// Model flags without a model controller are refused in both benchmarks.
		{[]string{"des", "run", "--llm-model", "m"}, "--llm-model/--llm-base-url given, but --controller is not llm"},
		{[]string{"des", "suite", "--llm-model", "m", "--controller", "rule"}, "--llm-model/--llm-base-url given, but --controller does not include llm"},
		{[]string{"des", "case", "--case-id", "A3C9-1__centralized__rule__s1", "--llm-base-url", "http://h/v1"}, "--llm-model/--llm-base-url given, but case A3C9-1__centralized__rule__s1's controller is rule"},
		{[]string{"silo", "run", "--llm-model", "m"}, "--llm-model/--llm-base-url given, but --agent does not include llm"},
	} {
		_, err := run(t, append(tc.args, "--out", out)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to say %q", tc.args, err, tc.want)
		}
	}
}

func TestInFlagTerms(t *testing.T) {
	var lf siloLLMFlags
	silo := pflag.NewFlagSet("silo", pflag.ContinueOnError)
	lf.register(silo)
	silo.String("seeds", "1", "")
	var df llmFlags
	des := pflag.NewFlagSet("des", pflag.ContinueOnError)
	df.register(des)

	notFound := &llm.Error{Method: "POST", Endpoint: "http://h/v1/chat/completions", Model: "m", Status: 404,
		Hint: "check the base URL", See: []string{"BaseURL", "Model"}}
	overflow := &llm.Error{Method: "POST", Endpoint: "http://h/v1/chat/completions", Model: "m", Status: 400,
		Hint: "the prompt does not fit", ContextOverflow: true}
	miss := &llm.CacheMissError{Key: "k", Endpoint: "http://h/v1", Model: "m", Messages: 2}
	for _, tc := range []struct {
		fs       *pflag.FlagSet
		err      error
		want     string
		sentinel error
	}{
		{silo, fmt.Errorf("agent 1: %w", notFound), "check the base URL (see --llm-base-url, --llm-model)", nil},
		{silo, fmt.Errorf("%w (see ContextBudget)", overflow), "the prompt does not fit (see --context-budget)", llm.ErrContextOverflow},
		{des, fmt.Errorf("%w (see ContextBudget)", overflow), "the prompt does not fit (see ContextBudget)", llm.ErrContextOverflow}, // des has no --context-budget
		{silo, fmt.Errorf("turn 2: %w", miss), "no request was sent; cache mode read-write fills the cache (see --llm-cache-mode)", llm.ErrCacheMiss},
		{des, fmt.Errorf("case x: %w", harness.ErrNoMaker), "case x: no maker given for its controller", harness.ErrNoMaker}, // des here has no --controller-command
		{silo, opterr.New("Seeds", "bad"), "--seeds: bad", nil},
		{silo, opterr.New("Unheard", "bad"), "Unheard: bad", nil}, // no flag: the option keeps its name
	} {
		got := inFlagTerms(tc.fs, tc.err)
		if got.Error() != tc.want && !strings.HasSuffix(got.Error(), tc.want) {
			t.Errorf("%v: %q, want it to end in %q", tc.err, got, tc.want)
		}
		if tc.sentinel != nil && !errors.Is(got, tc.sentinel) {
			t.Errorf("%v: %v is no longer %v", tc.err, got, tc.sentinel)
		}
		var oe *opterr.Error
		if errors.As(tc.err, &oe) && !errors.As(got, &oe) {
			t.Errorf("%v: %v lost the option error", tc.err, got)
		}
	}
	if inFlagTerms(silo, nil) != nil {
		t.Error("nil is an error")
	}
	// Errors recorded as text (an agent's) name flags too.
	if got, want := seeInFlagTerms(silo, "agent 0: x (see BaseURL) y (see Seed, Nope)"), "agent 0: x (see --llm-base-url) y (see --llm-seed, Nope)"; got != want {
		t.Errorf("text: %q, want %q", got, want)
	}
}
