package main

import (
	"cmp"
	"errors"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/report"
	"github.com/coordbench/coordbench/sweep"
)

// The library packages speak of their own options: an *opterr.Error names
// the option whose value is wrong ("Seeds"), a message points at options
// with opterr.SeeText ("(see BaseURL, Model)", also in errors recorded as
// text, such as an agent's), and sentinel errors state facts (a case id
// that does not give its instance). The CLI sets those options with
// flags, so before an error reaches the user it is put in flag terms: each
// option becomes the flag that sets it, and a fact gets the hint of what
// to do with which flag.

// optionFlags are the flags that set a library option: the fields of
// des/harness.SuiteOptions (and RunSuite's dir), silo/suite.Options,
// llm.Config and llm.Spec, des/llmctl.MakerConfig, silo/play.LLMConfig,
// sweep.RunConfig, report.Options, silo/analyze.Options, the sweep's
// Shard (and Collect's out), and of sweep/jetstream: WorkerOptions and
// ServeOptions (Dir), Spec (Store), ServerConfig's listen and auth,
// CheckToken's token and the
// worker's Trust (AllowEndpoints, ExperimentDir). Nil for an option no
// flag sets.
func optionFlags(option string) []string { return flagOf[option] }

// flagOf is optionFlags' table.
var flagOf = map[string][]string{
	"Suite":            {"--suite"},
	"Paradigms":        {"--paradigm"},
	"ParadigmFiles":    {"--paradigm-file"},
	"Seeds":            {"--seeds"},
	"Controllers":      {"--controller"},
	"Limit":            {"--limit"},
	"Cases":            {"--cases"},
	"GroupBy":          {"--group-by"},
	"dir":              {"--out"},
	"Force":            {"--force"},
	"Levels":           {"--levels"},
	"Tasks":            {"--tasks"},
	"Agents":           {"--agents"},
	"Agent":            {"--agent"},
	"Protocols":        {"--protocols"},
	"Mode":             {"--mode"},
	"MessageFormat":    {"--message-format"},
	"MessageOrder":     {"--message-order"},
	"Baseline":         {"--baseline"},
	"Teams":            {"--team"}, // or --team-shares: siloLLMFlags.teamError
	"LLM":              {"--llm-model", "--llm-base-url"},
	"BaseURL":          {"--llm-base-url"},
	"Model":            {"--llm-model"},
	"APIKeyEnv":        {"--llm-api-key-env"},
	"Temperature":      {"--llm-temperature"},
	"MaxTokens":        {"--llm-max-tokens"},
	"Seed":             {"--llm-seed"},
	"Cache":            {"--llm-cache"},
	"CacheMode":        {"--llm-cache-mode"},
	"CacheKeyURL":      {"--llm-cache-key-url"},
	"ContextBudget":    {"--context-budget"},
	"ReplyReserve":     {"--reply-reserve"},
	"ToolFormat":       {"--tool-format"},
	"ToolResults":      {"--tool-results"},
	"Scaffold":         {"--scaffold"},
	"Framework":        {"--framework"},
	"ReplyParsing":     {"--reply-parsing"},
	"MaxModelFailures": {"--max-model-failures"},
	"Name":             {"--llm-label"},
	"Timeout":          {"--llm-timeout"},
	"MaxAttempts":      {"--llm-max-attempts"},
	"CostLimit":        {"--cost-limit"},
	"Workers":          {"--workers"},
	"Dir":              {"--out"},
	"Format":           {"--format"},
	"Tables":           {"--table"},
	"Compare":          {"--compare"},
	"CompareBy":        {"--compare-by"},
	"MaxRuns":          {"--max-runs"},
	"Shard":            {"--shard"},
	"out":              {"--out"},
	"Store":            {"--store"},
	"listen":           {"--listen"},
	"auth":             {"--open"},
	"token":            {"--token-env"},
	"AllowEndpoints":   {"--allow-endpoint"},
	"ExperimentDir":    {"--experiment-dir"},
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
		{harness.ErrNoMaker, []string{"--controller-command", "--llm-model"}, "give its flags (the model flags, or --controller-command)"},
		{harness.ErrNoInstanceRef, []string{"--instance", "--suite-dir"}, "give the instance file (--instance FILE) or the suite directory (--suite-dir DIR)"},
		{report.ErrRunDir, []string{"--format", "--out"}, "write it with --format html (or --out FILE.html)"},
	}
}

// flagError is an error in flag terms; it wraps the library's error.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// hasFlags reports whether fs has every one of flags (and there are some).
func hasFlags(fs *pflag.FlagSet, flags []string) bool {
	for _, f := range flags {
		if fs.Lookup(strings.TrimPrefix(f, "--")) == nil {
			return false
		}
	}
	return len(flags) > 0
}

// terms are the words of one command for the library's options: its
// flags, and for a command that reads an experiment file (experimentCmd)
// the file's fields for options no flag of it sets.
type terms struct {
	fs         *pflag.FlagSet
	experiment bool
}

// experimentAnnotation marks a command that reads an experiment file.
const experimentAnnotation = "coordbench/experiment"

// experimentCmd marks c as a command whose options are set in an
// experiment file (termsOf).
func experimentCmd(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[experimentAnnotation] = "true"
	return c
}

// termsOf are cmd's terms.
func termsOf(cmd *cobra.Command) terms {
	return terms{fs: cmd.Flags(), experiment: cmd.Annotations[experimentAnnotation] != ""}
}

// name is what sets option in t: its flag (or flags), or its experiment
// field, or "" for an option t has no word for.
func (t terms) name(option string) string {
	if flags := optionFlags(option); hasFlags(t.fs, flags) {
		return strings.Join(flags, " and ")
	}
	if t.experiment {
		if f := sweep.OptionField(option); f != "" {
			return "the experiment's " + f
		}
	}
	return ""
}

// seeRE matches opterr.SeeText.
var seeRE = regexp.MustCompile(` \(see ([A-Za-z]+(?:, [A-Za-z]+)*)\)`)

// see names the options of the see-lists of msg (opterr.SeeText) in t's
// words; an option t has no word for is left out (a name of the Go API
// means nothing to the user of a command), and a list left empty is
// dropped.
func (t terms) see(msg string) string {
	return seeRE.ReplaceAllStringFunc(msg, func(see string) string {
		var names []string
		for _, o := range strings.Split(seeRE.FindStringSubmatch(see)[1], ", ") {
			if n := t.name(o); n != "" {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return ""
		}
		return opterr.SeeText(names)
	})
}

// seeInFlagTerms names the options in the see-lists of msg in cmd's terms.
func seeInFlagTerms(cmd *cobra.Command, msg string) string { return termsOf(cmd).see(msg) }

// inFlagTerms puts err in the terms t: the first *opterr.Error in its
// chain and the see-lists of its message name flags (or experiment
// fields) instead of options (an option without a word in t keeps its
// name as the error's subject, and is left out of a see-list), and the
// hints of the sentinels it matches are added.
func inFlagTerms(t terms, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if oe := (*opterr.Error)(nil); errors.As(err, &oe) {
		named := opterr.Error{Option: cmp.Or(t.name(oe.Option), oe.Option), Err: oe.Err, See: oe.See}
		msg = strings.Replace(msg, oe.Error(), named.Error(), 1)
	}
	msg = t.see(msg)
	for _, h := range flagHints() {
		if hasFlags(t.fs, h.flags) && errors.Is(err, h.err) {
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
			return inFlagTerms(termsOf(cmd), run(cmd, args))
		}
	}
}
