package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/suiterun"
	"github.com/coordbench/coordbench/telemetry"
)

// SuiteRunOptions tune how a suite runs; none changes its cases' results.
// The runner's options are suiterun's (workers, force, progress, resume
// hooks: suiterun.Options), as the information-silo suites' are.
type SuiteRunOptions struct {
	suiterun.Options
	// GroupBy are the group keys of the aggregate (see Aggregate and
	// ParseGroupBy); empty is GroupKeys.
	GroupBy []string

	// runEpisode replaces RunToDir in tests.
	runEpisode func(context.Context, Episode, string) (Result, error)
}

// SuiteProgress is the state of a running suite.
type SuiteProgress = suiterun.Progress

// CaseResult is one row of the summary.
type CaseResult struct {
	Case Case
	// Status is the episode's status (done, deadlock, ...), or "error" when
	// the episode or writing its artifacts failed.
	Status  string
	Err     string
	Metrics Metrics
	// Skipped: finished in an earlier run with the same configuration.
	Skipped bool
}

// SuiteReport is what RunSuite did.
type SuiteReport struct {
	Dir   string
	Suite *Suite
	// Cases are the cases that ended, in suite order: finished ones and
	// failed ones (status error); cases an interruption kept from starting
	// are absent.
	Cases  []CaseResult
	Ran    int // cases run now
	Skip   int // cases finished earlier and kept
	Failed int // cases with status error
	// Interrupted: the context was cancelled before every case had run.
	Interrupted bool
	// GroupBy are the aggregate's group keys (empty: GroupKeys), Aggregate
	// its rows.
	GroupBy   []string
	Aggregate []GroupAggregate
}

// Complete reports whether every case of the suite has ended.
func (r *SuiteReport) Complete() bool { return len(r.Cases) == len(r.Suite.Cases) }

// RunSuite runs the cases of s into dir that are not already there, with
// package suiterun: cases go to dir/cases/<id>/ (SuiteCasesDir), failed
// ones with error.txt to dir/failed/<id>/ (SuiteFailedDir), and a rerun
// keeps every case whose directory exists and whose manifest.json matches
// the case (instance hash, seed, paradigm with every switch, controller
// with its models, framework and reply parsing, tool, payload and trace
// versions) and reruns any other.
//
// When ctx is cancelled, no new case starts; cases in flight finish. The
// summary and aggregate files always describe the ended cases.
func RunSuite(ctx context.Context, s *Suite, dir string, opt SuiteRunOptions) (*SuiteReport, error) {
	if _, err := ParseGroupBy(strings.Join(opt.GroupBy, ",")); err != nil {
		return nil, err
	}
	if err := opt.Options.Validate(); err != nil { // before the scratch pool is sized by it
		return nil, err
	}
	run := opt.runEpisode
	if run == nil {
		run = RunToDir
	}
	ids := make([]string, len(s.Cases))
	for i, c := range s.Cases {
		ids[i] = c.ID
	}
	// Each case borrows the storage of an ended one (engine, interpreter,
	// trace writer): at most one Scratch per case running at once.
	scratches := make(chan *Scratch, max(opt.Workers, 1))
	var rep *SuiteReport
	plan := suiterun.Plan[CaseResult]{
		IDs: ids,
		// A directory holds one suite; a rerun may select other cases of it.
		// An external runner's cases stay tied to that runner by its
		// identity in the configuration: their manifests cannot tell two
		// commands apart.
		Config:    s.Config,
		Selection: []string{"limit", "only_cases", "case_count"},
		Begin: func() error {
			if opt.Force {
				return nil
			}
			return SameScorer(dir)
		},
		Finished: func(i int, dir string) (CaseResult, bool) { return finishedCase(s.Cases[i], dir) },
		Run: func(ctx context.Context, i int, dir string) (CaseResult, error) {
			var sc *Scratch
			select {
			case sc = <-scratches:
			default:
				sc = &Scratch{}
			}
			r, err := runCase(ctx, s.Cases[i], dir, sc, run)
			if err == nil { // a failed case (a panic, say) leaves its storage behind
				select {
				case scratches <- sc:
				default:
				}
			}
			return r, err
		},
		End: func(r *suiterun.Report[CaseResult]) error {
			rep = suiteReport(s, dir, r, opt.GroupBy)
			return writeSuiteFiles(dir, rep)
		},
	}
	// rep is set by End, which suiterun.Run calls whenever it returns a report.
	_, err := suiterun.Run(ctx, suiterun.Layout{Dir: dir, CasesDir: SuiteCasesDir, ConfigFile: FileSuiteConfig}, plan, opt.Options)
	return rep, err
}

// SameScorer refuses a suite directory whose suite.json records another
// scorer version than this build's, or none (suiterun.SameScorer).
func SameScorer(dir string) error {
	return suiterun.SameScorer(dir, FileSuiteConfig, ScorerVersion, "coordbench des rescore")
}

// suiteReport turns the runner's outcomes into summary rows.
func suiteReport(s *Suite, dir string, r *suiterun.Report[CaseResult], groupBy []string) *SuiteReport {
	rep := &SuiteReport{Dir: dir, Suite: s, Ran: r.Ran, Skip: r.Skipped, Failed: r.Failed, Interrupted: r.Interrupted,
		GroupBy: groupBy}
	for _, o := range r.Outcomes {
		cr := o.Result
		cr.Case, cr.Skipped = s.Cases[o.Index], o.Skipped
		if o.Failed() {
			cr.Status, cr.Err = StatusError, o.Err
		}
		rep.Cases = append(rep.Cases, cr)
	}
	rep.Aggregate = Aggregate(s, groupBy, rep.Cases)
	return rep
}

// runCase runs one case into dir on the storage of sc: its episode, then
// the controller's end-of-case hook. ctx is not cancelled with the
// suite's (suiterun), and a case in flight runs to its end, unless the
// suite cancels cases in flight: then ctx's end interrupts the episode
// (a cancelled ctx alone would only make the controller's answers fall
// back while the episode went on).
func runCase(ctx context.Context, c Case, dir string, sc *Scratch, run func(context.Context, Episode, string) (Result, error)) (CaseResult, error) {
	r := CaseResult{Case: c}
	ctx = telemetry.WithAttrs(ctx, telemetry.String(telemetry.KeyCaseID, c.ID)) // for the episode's span
	ep, err := c.EpisodeIn(ctx, dir)
	if err != nil {
		return r, err
	}
	ep.Scratch = sc
	ep.Stop = ctx.Done() // nil, never closed, for a case that runs to its end
	res, err := run(ctx, ep, dir)
	r.Metrics, r.Status = res.Metrics, res.Metrics.Status
	if err == nil {
		err = res.Err
	}
	if eerr := c.EndIn(ep, dir); err == nil {
		err = eerr
	}
	return r, err
}

// finishedCase reports whether dir holds case c as this tool would write
// it now, and returns its summary row.
// CaseFinished reports whether dir holds case c finished by this tool,
// as a suite run that resumes counts it (and a sweep's summary lists
// it): its manifest records c, its files are there, its metrics are
// those the manifest hashes, and it did not end in an error.
func CaseFinished(c Case, dir string) bool {
	r, ok := finishedCase(c, dir)
	return ok && r.Status != StatusError
}

func finishedCase(c Case, dir string) (CaseResult, bool) {
	var man Manifest
	if err := atomicfs.ReadJSON(filepath.Join(dir, FileManifest), &man); err != nil {
		return CaseResult{}, false
	}
	if !ManifestMatches(man, c) {
		return CaseResult{}, false
	}
	for name := range man.Files {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return CaseResult{}, false
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, FileMetrics))
	if err != nil || sha256Hex(b) != man.Files[FileMetrics] {
		return CaseResult{}, false
	}
	var m Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		return CaseResult{}, false
	}
	return CaseResult{Case: c, Status: m.Status, Metrics: m, Skipped: true}, true
}

// ManifestMatches reports whether man records case c run by this tool:
// same tool version, instance (by hash), seed, paradigm with every switch,
// controller (with its models, framework and reply-parsing rule), payload
// and trace formats.
func ManifestMatches(man Manifest, c Case) bool {
	return man.Tool == "coordbench" && man.Version == Version() &&
		man.PayloadVersion == coord.PayloadVersion && man.TraceFormat == TraceFormat &&
		man.Instance == c.Instance.Name && man.InstanceSHA256 == c.Instance.SHA256 &&
		man.Seed == c.Seed && man.Controller == c.Controller && sameModel(man, c) &&
		man.ReplyParsing == c.ReplyParsing && reflect.DeepEqual(man.Paradigm, c.Paradigm)
}

// sameModel compares the models and framework a manifest records with the
// case's. A case whose controller names them only when it runs (an
// external runner reports its own) leaves them empty and matches any: its
// suite directory is tied to one runner by suite.json instead.
func sameModel(man Manifest, c Case) bool {
	if _, ok := c.maker.(DirControllerMaker); ok && c.Model == "" && c.Framework == "" {
		return true
	}
	return man.Model == c.Model && man.Framework == c.Framework
}
