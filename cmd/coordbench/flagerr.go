package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
)

// The library packages speak of their own options: an *opterr.Error names
// the option whose value is wrong ("Seeds"), an *llm.Error the Config
// fields a failure points at ("BaseURL"), and sentinel errors state facts
// (a replay-mode cache miss). The CLI sets those options with flags, so
// before an error reaches the user it is put in flag terms: each option
// becomes the flag that sets it, and a fact gets the hint of what to do
// with which flag.

// optionFlags are the flags that set a library option: the fields of
// des/harness.SuiteOptions (and RunSuite's dir), silo/suite.Options and
// llm.Config. Nil for an option no flag sets.
func optionFlags(option string) []string {
	switch option {
	case "Suite":
		return []string{"--suite"}
	case "Paradigms":
		return []string{"--paradigm"}
	case "ParadigmFiles":
		return []string{"--paradigm-file"}
	case "Seeds":
		return []string{"--seeds"}
	case "Controllers":
		return []string{"--controller"}
	case "Limit":
		return []string{"--limit"}
	case "Cases":
		return []string{"--cases"}
	case "dir":
		return []string{"--out"}
	case "Levels":
		return []string{"--levels"}
	case "Tasks":
		return []string{"--tasks"}
	case "Agents":
		return []string{"--agents"}
	case "Agent":
		return []string{"--agent"}
	case "Protocols":
		return []string{"--protocols"}
	case "Mode":
		return []string{"--mode"}
	case "LLM":
		return []string{"--llm-model", "--llm-base-url"}
	case "BaseURL":
		return []string{"--llm-base-url"}
	case "Model":
		return []string{"--llm-model"}
	case "APIKeyEnv":
		return []string{"--llm-api-key-env"}
	case "Temperature":
		return []string{"--llm-temperature"}
	case "MaxTokens":
		return []string{"--llm-max-tokens"}
	case "Seed":
		return []string{"--llm-seed"}
	case "Cache":
		return []string{"--llm-cache"}
	case "CacheMode":
		return []string{"--llm-cache-mode"}
	}
	return nil
}

// flagHint is what to do, with which flags, about a fact a library
// reports as a sentinel error.
type flagHint struct {
	err   error
	flags []string // the hint applies to commands that have these flags
	text  string
}

func flagHints() []flagHint {
	return []flagHint{
		{llm.ErrCacheMiss, []string{"--llm-cache-mode"}, "re-run with --llm-cache-mode read-write to fill the cache"},
		{llm.ErrContextOverflow, []string{"--context-budget"}, "bound the prompt with --context-budget"},
		{harness.ErrNoMaker, []string{"--controller-command", "--llm-model"}, "give its flags (the model flags, or --controller-command)"},
		{harness.ErrNoInstanceRef, []string{"--instance", "--suite-dir"}, "give the instance file (--instance FILE) or the suite directory (--suite-dir DIR)"},
	}
}

// flagError is an error in flag terms; it wraps the library's error.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// inFlagTerms puts err in the terms of a command with flags fs: the first
// *opterr.Error and *llm.Error in its chain name flags instead of options
// (an option without a flag of fs keeps its name), and the hints of the
// sentinels it matches are added.
func inFlagTerms(fs *pflag.FlagSet, err error) error {
	if err == nil {
		return nil
	}
	has := func(flags []string) bool {
		for _, f := range flags {
			if fs.Lookup(strings.TrimPrefix(f, "--")) == nil {
				return false
			}
		}
		return len(flags) > 0
	}
	name := func(option string) string {
		if flags := optionFlags(option); has(flags) {
			return strings.Join(flags, " and ")
		}
		return option
	}
	names := func(options []string) []string {
		out := make([]string, len(options))
		for i, o := range options {
			out[i] = name(o)
		}
		return out
	}
	msg := err.Error()
	if oe := (*opterr.Error)(nil); errors.As(err, &oe) {
		named := opterr.Error{Option: name(oe.Option), Err: oe.Err, See: names(oe.See)}
		msg = strings.Replace(msg, oe.Error(), named.Error(), 1)
	}
	if le := (*llm.Error)(nil); errors.As(err, &le) && len(le.See) > 0 {
		named := *le
		named.See = names(le.See)
		msg = strings.Replace(msg, le.Error(), named.Error(), 1)
	}
	for _, h := range flagHints() {
		if has(h.flags) && errors.Is(err, h.err) {
			msg += "; " + h.text
		}
	}
	if msg == err.Error() {
		return err
	}
	return &flagError{msg: msg, err: err}
}

// inFlagTermsAll makes every command under c return its errors in flag
// terms (inFlagTerms with the command's flags).
func inFlagTermsAll(c *cobra.Command) {
	for _, sub := range c.Commands() {
		inFlagTermsAll(sub)
	}
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			return inFlagTerms(cmd.Flags(), run(cmd, args))
		}
	}
}
