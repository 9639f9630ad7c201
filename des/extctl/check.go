package extctl

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
)

// CheckOptions configures Check.
type CheckOptions struct {
	// Timeout and Grace as in Config (defaults DefaultTimeout, DefaultGrace).
	Timeout, Grace time.Duration
	// Slow: an answer slower than this is reported as a warning (default
	// 1 s; a negative value turns the warning off).
	Slow time.Duration
	// Dir, if set, keeps each episode's run directory (artifacts,
	// controller_stderr.txt, controller.json) under Dir/<episode>.
	Dir string
	// WorkDir and Env as Config.Dir and Config.Env.
	WorkDir string
	Env     []string
	// Episodes replaces the fixed set (CheckEpisodes), for tests.
	Episodes []CheckEpisode
	// Progress, if set, gets one line per finished episode.
	Progress io.Writer
}

// CheckEpisode is one episode of the conformance check.
type CheckEpisode struct {
	Name     string `json:"name"`
	Instance string `json:"instance"`
	Paradigm string `json:"paradigm"`
	Seed     uint64 `json:"seed"`
	// Horizon, if positive, replaces the instance's horizon.
	Horizon float64 `json:"horizon,omitempty"`
}

// CheckInstance is the instance of the conformance check.
const CheckInstance = "A3C9-1"

// CheckEpisodes is the fixed set of the conformance check: A3C9-1 under
// each built-in paradigm on its first test seed (every decision kind,
// bid rounds with several active agents, rejections and reroutes), then
// one contract-net episode on the second test seed cut short by a tenth of
// the horizon, so that episode_end reports a truncated episode.
func CheckEpisodes() []CheckEpisode {
	in, err := factory.Resolve(CheckInstance)
	if err != nil {
		panic(err) // a reported instance always resolves
	}
	var eps []CheckEpisode
	seed := in.Seeds.Test[0]
	for _, m := range coord.Builtins() {
		eps = append(eps, CheckEpisode{Name: fmt.Sprintf("%s/%s/s%d", in.Name, m.ID, seed), Instance: in.Name, Paradigm: m.ID, Seed: seed})
	}
	seed, h := in.Seeds.Test[1], in.Horizon/10
	eps = append(eps, CheckEpisode{Name: fmt.Sprintf("%s/%s/s%d/horizon%g", in.Name, coord.HeterarchicalCNP().ID, seed, h),
		Instance: in.Name, Paradigm: coord.HeterarchicalCNP().ID, Seed: seed, Horizon: h})
	return eps
}

// EpisodeReport is the outcome of one checked episode.
type EpisodeReport struct {
	CheckEpisode
	Status string `json:"status"`
	// Steps is the number of decision steps (G_ds), Decisions the number
	// of agent decisions (several per bid round), Fallbacks how many of
	// these fell back (G_fb).
	Steps     int            `json:"steps"`
	Decisions int            `json:"decisions"`
	Fallbacks int            `json:"fallbacks"`
	Kinds     map[string]int `json:"decisions_by_kind"`
	RunError  string         `json:"run_error,omitempty"`
	Dir       string         `json:"dir,omitempty"`
	// StderrTail is the end of the runner's stderr log.
	StderrTail string  `json:"stderr_tail,omitempty"`
	Runner     Summary `json:"runner"`
}

// CheckReport is the outcome of Check.
type CheckReport struct {
	Command  string          `json:"command"`
	Protocol string          `json:"protocol"`
	SlowMS   float64         `json:"slow_ms"`
	Episodes []EpisodeReport `json:"episodes"`
	Errors   int             `json:"errors"`
	Warnings int             `json:"warnings"`
	// Counts is the number of violations by code, over every episode.
	Counts  map[string]int `json:"violation_counts"`
	Latency Latency        `json:"latency_ms"`
}

// Clean reports whether the runner broke no protocol rule (warnings
// allowed).
func (r *CheckReport) Clean() bool { return r.Errors == 0 }

// Check runs the runner command through the conformance episodes and
// reports every protocol violation and the reply latency. The error is
// set only when the check itself cannot run (an empty command, an
// unwritable Dir); a failing runner is a report that is not Clean.
func Check(ctx context.Context, command string, opts CheckOptions) (*CheckReport, error) {
	if strings.TrimSpace(command) == "" {
		return nil, fmt.Errorf("extctl: empty runner command")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Slow == 0 {
		opts.Slow = time.Second
	}
	eps := opts.Episodes
	if eps == nil {
		eps = CheckEpisodes()
	}
	rep := &CheckReport{Command: command, Protocol: Protocol, Counts: map[string]int{}}
	if opts.Slow > 0 {
		rep.SlowMS = float64(opts.Slow.Microseconds()) / 1000
	}
	var all []time.Duration
	for _, ce := range eps {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		er, lat, err := checkEpisode(ctx, command, ce, opts)
		if err != nil {
			return rep, err
		}
		all = append(all, lat...)
		rep.Episodes = append(rep.Episodes, er)
		rep.Errors += er.Runner.Errors
		rep.Warnings += er.Runner.Warnings
		for k, n := range er.Runner.Counts {
			rep.Counts[k] += n
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "%s: %s, %d steps, %d errors, %d warnings\n", ce.Name, er.Status, er.Steps, er.Runner.Errors, er.Runner.Warnings)
		}
	}
	rep.Latency = LatencyOf(all)
	return rep, nil
}

func checkEpisode(ctx context.Context, command string, ce CheckEpisode, opts CheckOptions) (EpisodeReport, []time.Duration, error) {
	er := EpisodeReport{CheckEpisode: ce, Kinds: map[string]int{}}
	in, err := factory.Resolve(ce.Instance)
	if err != nil {
		return er, nil, err
	}
	if ce.Horizon > 0 {
		in.Horizon = ce.Horizon
	}
	mode, err := new(coord.Paradigms).Lookup(ce.Paradigm) // CheckEpisodes names built-ins only
	if err != nil {
		return er, nil, err
	}
	p := factory.Compile(in)
	var stderr io.Writer
	tail := &tailWriter{max: 4096}
	stderr = tail
	if opts.Dir != "" {
		er.Dir = filepath.Join(opts.Dir, strings.NewReplacer("/", "_", ":", "-").Replace(ce.Name))
		if err := os.MkdirAll(er.Dir, 0o755); err != nil {
			return er, nil, err
		}
		f, err := os.Create(filepath.Join(er.Dir, StderrFile))
		if err != nil {
			return er, nil, err
		}
		defer f.Close()
		stderr = io.MultiWriter(f, tail)
	}
	c, err := Start(ctx, Config{Command: command, Dir: opts.WorkDir, Env: opts.Env, Timeout: opts.Timeout, Grace: opts.Grace,
		Stderr: stderr, Episode: EpisodeOf(p, mode, ce.Seed)})
	if err != nil {
		return er, nil, err
	}
	defer c.Close()
	kc := &kindCounter{Controller: c, kinds: er.Kinds}
	ep := harness.Episode{Plant: p, Seed: ce.Seed, Mode: mode, Controller: kc}
	var res harness.Result
	if er.Dir != "" {
		res, err = harness.RunToDir(ctx, ep, er.Dir)
	} else {
		res = harness.Run(ctx, ep)
		err = res.Err
	}
	if err != nil {
		er.RunError = err.Error()
	}
	c.End(res.Metrics)
	lat := c.Latencies()
	if opts.Slow > 0 {
		var slow []time.Duration
		for _, d := range lat {
			if d > opts.Slow {
				slow = append(slow, d)
			}
		}
		if len(slow) > 0 {
			c.violate(StepEpisode, VSlow, SevWarning, fmt.Sprintf("%d of %d answers slower than %s (slowest %s)",
				len(slow), len(lat), opts.Slow, slices.Max(slow).Round(time.Millisecond)))
		}
	}
	er.Runner = c.Summary()
	m := res.Metrics
	er.Status, er.Steps, er.Decisions, er.Fallbacks = m.Status, m.GDs, m.Secondary.Decisions, m.GFb
	er.StderrTail = tail.String()
	if er.Dir != "" {
		if err := WriteSummary(filepath.Join(er.Dir, SummaryFile), er.Runner); err != nil {
			return er, lat, err
		}
	}
	return er, lat, nil
}

// kindCounter counts the decisions by kind on their way to the runner.
type kindCounter struct {
	*Controller
	kinds map[string]int
}

func (k *kindCounter) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	for _, v := range d.ActiveAgents {
		k.kinds[v.Kind]++
	}
	return k.Controller.Act(ctx, d)
}

// tailWriter keeps the last max bytes written.
type tailWriter struct {
	max int
	b   []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	if len(t.b) > t.max {
		return "…" + string(t.b[len(t.b)-t.max:])
	}
	return string(t.b)
}

// WriteText prints the report for people: one line per episode, the
// latency, then every violation (the first ten per episode and code).
func (r *CheckReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "runner: %s\nprotocol: %s\n\n", r.Command, r.Protocol)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EPISODE\tSTATUS\tSTEPS\tDECISIONS\tFALLBACKS\tERRORS\tWARNINGS\tP50 MS\tP99 MS\tMAX MS")
	for _, e := range r.Episodes {
		l := e.Runner.Latency
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\n", e.Name, e.Status, e.Steps, e.Decisions, e.Fallbacks,
			e.Runner.Errors, e.Runner.Warnings, l.P50, l.P99, l.Max)
	}
	tw.Flush()
	l := r.Latency
	fmt.Fprintf(w, "\nlatency over %d answers (ms): mean %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n", l.N, l.Mean, l.P50, l.P90, l.P99, l.Max)
	for _, e := range r.Episodes {
		if len(e.Runner.Violations) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", e.Name)
		if e.Runner.Failure != "" {
			fmt.Fprintf(w, "  FAILED: %s\n", e.Runner.Failure)
		}
		shown := map[string]int{}
		for _, v := range e.Runner.Violations {
			if shown[v.Code]++; shown[v.Code] <= 10 {
				fmt.Fprintf(w, "  %s\n", v)
			}
		}
		for _, code := range slices.Sorted(maps.Keys(e.Runner.Counts)) {
			if n := e.Runner.Counts[code]; n > 10 {
				fmt.Fprintf(w, "  … %d %s in all\n", n, code)
			}
		}
		if e.Runner.Failure != "" && strings.TrimSpace(e.StderrTail) != "" {
			fmt.Fprintf(w, "  stderr (end):\n")
			for _, line := range strings.Split(strings.TrimRight(e.StderrTail, "\n"), "\n") {
				fmt.Fprintf(w, "    | %s\n", line)
			}
		}
	}
	fmt.Fprintln(w)
	switch {
	case r.Clean() && r.Warnings == 0:
		fmt.Fprintf(w, "OK: no violation in %d episodes\n", len(r.Episodes))
	case r.Clean():
		fmt.Fprintf(w, "OK: no protocol error in %d episodes (%d warnings)\n", len(r.Episodes), r.Warnings)
	default:
		fmt.Fprintf(w, "FAIL: %d protocol errors, %d warnings in %d episodes\n", r.Errors, r.Warnings, len(r.Episodes))
	}
}
