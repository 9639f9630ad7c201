package inspect

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coordbench/coordbench/des/harness"
)

// DefaultCreated is the eval's created time when none is given: coordbench
// records no wall-clock time in its runs (so that a run's files are the
// same bytes when it is made again), so there is no true one to write.
const DefaultCreated = "1970-01-01T00:00:00+00:00"

// Options are the choices of Logs.
type Options struct {
	// Created is the eval's created time (RFC 3339); "" is DefaultCreated.
	Created string
}

// Check tells whether the options are usable, before any run is read.
func (opt Options) Check() error {
	_, err := opt.created()
	return err
}

// created is the created time as the logs write it.
func (opt Options) created() (string, error) {
	c := opt.Created
	if c == "" {
		c = DefaultCreated
	}
	t, err := time.Parse(time.RFC3339, c)
	if err != nil {
		return "", fmt.Errorf("created time %q: want RFC 3339, e.g. 2026-01-02T15:04:05Z", c)
	}
	return t.Format("2006-01-02T15:04:05-07:00"), nil
}

// groupKey is what one eval log holds: the runs of one directory played
// by one controller (des) or agent (silo) with one model.
type groupKey struct {
	source, bench, controller, variant, model string
}

// Logs groups runs into Inspect eval logs: one per directory given,
// benchmark, controller or agent, and model, in the order of the runs'
// directories and then of those names. In each log a sample is a case
// without its seed (Run.Sample) and its seeds are the epochs, in
// increasing order.
func Logs(runs []Run, opt Options) ([]EvalLog, error) {
	created, err := opt.created()
	if err != nil {
		return nil, err
	}
	var srcOrder []string
	groups := map[groupKey][]Run{}
	for _, r := range runs {
		if !slices.Contains(srcOrder, r.Source) {
			srcOrder = append(srcOrder, r.Source)
		}
		k := groupKey{r.Source, r.Benchmark, r.Controller, r.Variant, r.Model}
		groups[k] = append(groups[k], r)
	}
	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(slices.Index(srcOrder, a.source), slices.Index(srcOrder, b.source)),
			cmp.Compare(a.bench, b.bench), cmp.Compare(a.controller, b.controller), cmp.Compare(a.variant, b.variant),
			cmp.Compare(a.model, b.model))
	})
	runIDs := map[string]string{}
	for _, k := range keys {
		runIDs[k.source] += k.bench + "\x00" + k.controller + "\x00" + k.variant + "\x00" + k.model + "\x00"
	}
	logs := make([]EvalLog, 0, len(keys))
	for _, k := range keys {
		logs = append(logs, evalLog(k, groups[k], shortID(runIDs[k.source]), created))
	}
	return logs, nil
}

// shortID is a 22-character id derived from s (Inspect's ids have 22
// characters; these have no '-' or '_', which its file names split on).
func shortID(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:22]
}

// evalLog builds the log of one group.
func evalLog(k groupKey, runs []Run, runID, created string) EvalLog {
	// Runs that share a sample id and a seed differ in what the sample id
	// leaves out (a setting of a merged sweep, say): their case ids, unique
	// in a directory, are their sample ids then.
	seedOf := map[string]int{}
	for _, r := range runs {
		seedOf[r.Sample+"\x00"+strconv.FormatUint(r.Seed, 10)]++
	}
	for i := range runs {
		if seedOf[runs[i].Sample+"\x00"+strconv.FormatUint(runs[i].Seed, 10)] > 1 {
			runs[i].Sample = runs[i].CaseID
		}
	}
	// Samples in id order, the seeds of a sample as its epochs.
	slices.SortFunc(runs, func(a, b Run) int {
		return cmp.Or(cmp.Compare(a.Sample, b.Sample), cmp.Compare(a.Seed, b.Seed), cmp.Compare(a.CaseID, b.CaseID))
	})
	var ids []string
	epochs, maxEpoch := map[string]int{}, 0
	samples := make([]EvalSample, 0, len(runs))
	stats := map[string]ModelUsage{}
	var idText strings.Builder
	for i := range runs {
		r := &runs[i]
		if epochs[r.Sample] == 0 {
			ids = append(ids, r.Sample)
		}
		epochs[r.Sample]++
		maxEpoch = max(maxEpoch, epochs[r.Sample])
		s := sample(r, epochs[r.Sample])
		for m, u := range s.ModelUsage {
			stats[m] = addUsage(stats[m], u)
		}
		samples = append(samples, s)
		fmt.Fprintf(&idText, "%s\x00%d\x00", r.CaseID, r.Seed)
		for _, m := range r.Metrics {
			fmt.Fprintf(&idText, "%s=%v\x00", m.Name, m.Value)
		}
	}
	task := "coordbench-" + k.bench
	taskID := shortID(k.source + "\x00" + task + "\x00" + k.controller + "\x00" + k.variant + "\x00" + k.model + "\x00" + idText.String())
	name := filepath.Base(k.source)
	loc := k.source
	solver := k.controller
	if k.variant != "" {
		solver += "/" + k.variant
	}
	version := ""
	if v, ok := runs[0].Meta["coordbench_version"].(string); ok {
		version = v
	}
	packages := map[string]string{}
	if version != "" {
		packages["coordbench"] = version
	}
	l := EvalLog{
		Version: LogVersion,
		Status:  "success",
		Eval: EvalSpec{
			RunID: runID, Created: created, Task: task, TaskID: taskID,
			TaskAttribs: map[string]any{}, TaskArgs: map[string]any{},
			Solver: &solver, Tags: []string{"coordbench", k.bench},
			Dataset: EvalDataset{Name: &name, Location: &loc, Samples: len(ids), SampleIDs: ids},
			Model:   k.model, ModelArgs: map[string]any{},
			Config:   nulls(evalConfigKeys, map[string]any{"epochs": maxEpoch}),
			Packages: packages,
			Metadata: map[string]any{
				"benchmark": k.bench, "controller": k.controller, "variant": k.variant, "model_recorded": runs[0].ModelRecorded,
				"source": k.source, "runs": len(runs),
			},
		},
		Plan: EvalPlan{Name: "plan", Steps: []EvalPlanStep{{Solver: solver, Params: map[string]any{}}},
			Config: nulls(generateConfigKeys, nil)},
		Results: EvalResults{TotalSamples: len(runs), CompletedSamples: len(runs), Scores: scores(runs),
			Metadata: map[string]any{"benchmark": k.bench, "aggregate": "mean and sample standard deviation over every run (sample and epoch)"}},
		Stats:   EvalStats{ModelUsage: stats},
		Samples: samples,
	}
	clean := strings.NewReplacer("_", "-", "/", "-", ":", "-")
	l.name = clean.Replace(created) + "_" + clean.Replace(task) + "_" + clean.Replace(taskID) + ".json"
	return l
}

// sample is the Inspect sample of run r at epoch.
func sample(r *Run, epoch int) EvalSample {
	s := EvalSample{
		ID: r.Sample, Epoch: epoch, Input: sampleInput(r),
		Scores: map[string]Score{}, Store: map[string]any{}, Events: []any{},
		ModelUsage: map[string]ModelUsage{}, Attachments: map[string]string{},
		Metadata: map[string]any{},
	}
	for k, v := range r.Meta {
		s.Metadata[k] = v
	}
	for k, v := range r.Fields {
		s.Metadata[k] = v
	}
	s.Metadata["model"], s.Metadata["model_recorded"] = r.Model, r.ModelRecorded
	s.Messages = make([]ChatMessage, 0, len(r.Messages))
	for _, m := range r.Messages {
		s.Messages = append(s.Messages, chat(m))
	}
	for _, m := range r.Metrics {
		if !math.IsNaN(m.Value) && !math.IsInf(m.Value, 0) {
			s.Scores[m.Name] = Score{Value: m.Value}
		}
	}
	switch {
	case len(r.ByModel) > 0:
		for m, u := range r.ByModel {
			s.ModelUsage[m] = modelUsage(u)
		}
	case r.ModelRecorded && r.Usage != (Usage{}):
		s.ModelUsage[r.Model] = modelUsage(r.Usage)
	}
	out := ModelOutput{Model: r.Model, Choices: []Choice{{
		Message: ChatMessage{Role: "assistant", Content: r.Summary}, StopReason: "unknown"}}}
	if r.Usage != (Usage{}) {
		u := modelUsage(r.Usage)
		out.Usage = &u
	}
	s.Output = out
	if r.Error != "" {
		s.Error = &EvalError{Message: r.Error}
	}
	return s
}

// sampleInput says what the run was asked to do.
func sampleInput(r *Run) string {
	if r.Benchmark == BenchDES {
		return fmt.Sprintf("Schedule the jobs of instance %v under the %v paradigm (seed %d); case %s.",
			r.Fields["instance"], r.Fields["paradigm"], r.Seed, r.CaseID)
	}
	return fmt.Sprintf("Solve task %v with %v agents over the %v protocol (%v mode, seed %d); run %s.",
		r.Fields["task"], r.Fields["n"], r.Fields["protocol"], r.Fields["mode"], r.Seed, r.CaseID)
}

func modelUsage(u Usage) ModelUsage {
	mu := ModelUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	if u.CachedInputTokens > 0 {
		c := u.CachedInputTokens
		mu.InputTokensCacheRead = &c
	}
	return mu
}

func addUsage(a, b ModelUsage) ModelUsage {
	a.InputTokens += b.InputTokens
	a.OutputTokens += b.OutputTokens
	a.TotalTokens += b.TotalTokens
	if b.InputTokensCacheRead != nil {
		c := *b.InputTokensCacheRead
		if a.InputTokensCacheRead != nil {
			c += *a.InputTokensCacheRead
		}
		a.InputTokensCacheRead = &c
	}
	return a
}

// scores are the mean and sample standard deviation of every metric over
// the runs, in the order the metrics first appear.
func scores(runs []Run) []EvalScore {
	var names []string
	vals := map[string][]float64{}
	for _, r := range runs {
		for _, m := range r.Metrics {
			if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
				continue
			}
			if _, ok := vals[m.Name]; !ok {
				names = append(names, m.Name)
			}
			vals[m.Name] = append(vals[m.Name], m.Value)
		}
	}
	out := make([]EvalScore, 0, len(names))
	for _, n := range names {
		mean, std := harness.MeanStd(vals[n]) // never empty: a name comes with its first value
		out = append(out, EvalScore{Name: n, Scorer: n, Params: map[string]any{}, Metrics: map[string]EvalMetric{
			"mean": {Name: "mean", Value: mean, Options: map[string]any{}},
			"std":  {Name: "std", Value: std, Options: map[string]any{}},
		}})
	}
	return out
}

// The keys of the schema's EvalConfig and GenerateConfig: coordbench sets
// none of them but the epochs, and the schema requires every one.
var (
	evalConfigKeys = []string{"limit", "epochs", "epochs_reducer", "trace", "approval", "fail_on_error",
		"message_limit", "token_limit", "time_limit", "max_samples", "max_tasks", "max_subprocesses",
		"sandbox_cleanup", "log_samples", "log_images", "log_buffer"}
	generateConfigKeys = []string{"max_retries", "timeout", "max_connections", "system_message", "max_tokens",
		"top_p", "temperature", "stop_seqs", "best_of", "frequency_penalty", "presence_penalty", "logit_bias",
		"seed", "suffix", "top_k", "num_choices", "logprobs", "top_logprobs", "parallel_tool_calls",
		"max_tool_output", "cache_prompt"}
)

// nulls is a map of every key to null, but those set.
func nulls(keys []string, set map[string]any) map[string]any {
	m := make(map[string]any, len(keys))
	for _, k := range keys {
		m[k] = nil
	}
	for k, v := range set {
		m[k] = v
	}
	return m
}
