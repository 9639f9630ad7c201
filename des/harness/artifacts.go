package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
)

// Artifact file names of a run directory.
const (
	FileMetrics   = "metrics.json"
	FileTrace     = "trace.jsonl"
	FileDecisions = "decisions.jsonl"
	FileMessages  = "messages.jsonl"
	FileManifest  = "manifest.json"
	FileInstance  = "instance.json"
	// FileTiming is the wall-clock side of decisions.jsonl (TimingLine per
	// agent answer with a controller note). It is the one artifact that
	// differs between a run and its replay, so the manifest does not hash
	// it.
	FileTiming = "timing.jsonl"
	// FileEpisodeTiming is the episode's wall-clock time (EpisodeTiming),
	// the other artifact that differs from run to run: the manifest does
	// not hash it either.
	FileEpisodeTiming = "episode_timing.json"
)

// EpisodeTiming is episode_timing.json: how long the episode took on the
// machine that ran it (Run, from the engine's start to its last record,
// the controller's calls and the writing of trace.jsonl, decisions.jsonl
// and messages.jsonl included; not the metrics, instance and manifest
// files written after it). Wall-clock time depends on the machine, its
// load and the suite's workers; it never enters metrics or results.
type EpisodeTiming struct {
	WallSeconds float64 `json:"wall_s"`
	// ByRole is the wall-clock side of the model-backed answers by role
	// (Result.RoleTiming): latency, response-cache hits and retries.
	ByRole map[string]RoleTiming `json:"by_role,omitempty"`
}

// TraceFormat tags the trace schema (docs/trace-format.md).
const TraceFormat = "coordbench-trace/v1"

// Manifest is manifest.json: what produced a run, enough to reproduce it.
type Manifest struct {
	Tool           string              `json:"tool"`
	Version        string              `json:"version"`
	Instance       string              `json:"instance"`
	InstanceSHA256 string              `json:"instance_sha256"`
	Seed           uint64              `json:"seed"`
	Paradigm       coord.AuthorityMode `json:"paradigm"`
	Controller     string              `json:"controller"`
	Model          string              `json:"model,omitempty"`
	Framework      string              `json:"framework,omitempty"`
	ReplyParsing   string              `json:"reply_parsing,omitempty"`
	PayloadVersion string              `json:"payload_version"`
	TraceFormat    string              `json:"trace_format"`
	Status         string              `json:"status"`
	// Scorer is the version of the scoring rules metrics.json was
	// computed under (ScorerVersion); absent in runs from before it was
	// recorded (ScorerUnrecorded).
	Scorer string            `json:"scorer,omitempty"`
	Files  map[string]string `json:"files_sha256"`
}

// ModelController is a controller backed by models (an LLM controller):
// its models and orchestration framework are recorded in manifests and
// metrics.
type ModelController interface {
	ModelNames() string
	Framework() string
}

// ReplyParser is implemented by model-backed controllers, and by their
// ControllerMakers, that read model replies under a named rule (llmctl:
// "published" or "strict"). The rule is recorded in manifest.json
// (reply_parsing): a resumed suite reruns a case recorded under another
// rule, or under none (a run from before the rule was recorded).
type ReplyParser interface {
	ReplyParsing() string
}

// ReplyParsingMaker is a ControllerMaker whose controllers read replies
// under a rule. Case ids leave its default rule out (so the ids of runs
// under it stay as they were) and name any other: "<model>-<framework>-strict".
type ReplyParsingMaker interface {
	ControllerMaker
	ReplyParser
	DefaultReplyParsing() string
}

// Version is the tool version recorded in manifests.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

// InstanceJSON is the canonical JSON of a resolved instance, as written to
// instance.json and hashed in the manifest.
func InstanceJSON(in *factory.Instance) []byte {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil { // an Instance is plain data; this cannot fail
		panic(err)
	}
	return append(b, '\n')
}

// RunToDir runs one episode and writes its artifacts into dir (created if
// needed). The returned error covers I/O and engine failures; metrics are
// written whenever the episode ran at all.
func RunToDir(ctx context.Context, ep Episode, dir string) (Result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, artifactError{err}
	}
	files := map[string]*os.File{}
	for _, name := range []string{FileTrace, FileDecisions, FileMessages, FileTiming} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			for _, g := range files {
				g.Close()
			}
			return Result{}, artifactError{err}
		}
		files[name] = f
	}
	streamed := func(name string) io.Writer {
		if ep.Wrap != nil {
			return ep.Wrap(name, files[name])
		}
		return files[name]
	}
	ep.Trace, ep.Decisions, ep.Messages, ep.Timing = streamed(FileTrace), streamed(FileDecisions), streamed(FileMessages), streamed(FileTiming)
	start := time.Now()
	res := Run(ctx, ep)
	wall := time.Since(start)
	var errs []error
	if res.Err != nil {
		errs = append(errs, res.Err)
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			errs = append(errs, artifactError{err})
		}
	}
	inst := InstanceJSON(ep.Plant.Inst)
	errs = append(errs, writeJSON(filepath.Join(dir, FileMetrics), res.Metrics))
	errs = append(errs, asArtifactError(os.WriteFile(filepath.Join(dir, FileInstance), inst, 0o644)))
	errs = append(errs, writeJSON(filepath.Join(dir, FileEpisodeTiming), EpisodeTiming{WallSeconds: wall.Seconds(), ByRole: res.RoleTiming}))
	sum := sha256.Sum256(inst)
	man := Manifest{
		Tool: "coordbench", Version: Version(), Instance: ep.Plant.Inst.Name, InstanceSHA256: hex.EncodeToString(sum[:]),
		Seed: ep.Seed, Paradigm: ep.Mode, Controller: ep.Controller.Name(), PayloadVersion: coord.PayloadVersion,
		TraceFormat: TraceFormat, Status: res.Metrics.Status, Scorer: ScorerVersion, Files: map[string]string{},
	}
	if md, ok := ep.Controller.(ModelController); ok {
		man.Model, man.Framework = md.ModelNames(), md.Framework()
	}
	if rp, ok := ep.Controller.(ReplyParser); ok {
		man.ReplyParsing = rp.ReplyParsing()
	}
	for _, name := range []string{FileTrace, FileDecisions, FileMessages, FileMetrics, FileInstance} {
		h, err := fileSHA256(filepath.Join(dir, name))
		errs = append(errs, asArtifactError(err))
		man.Files[name] = h
	}
	errs = append(errs, writeJSON(filepath.Join(dir, FileManifest), man))
	return res, errors.Join(errs...)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return asArtifactError(os.WriteFile(path, append(b, '\n'), 0o644))
}

// ErrArtifacts is in the error of a run whose artifacts could not all be
// written (a full or read-only disk): its directory is incomplete,
// whatever status its metrics give, and must not be taken for a run.
var ErrArtifacts = errors.New("the run's artifacts could not all be written")

// artifactError is a failure to write an artifact: its message is the
// I/O error's, and it is ErrArtifacts.
type artifactError struct{ err error }

func (e artifactError) Error() string   { return e.err.Error() }
func (e artifactError) Unwrap() []error { return []error{e.err, ErrArtifacts} }

// asArtifactError is err (if any) as an artifactError.
func asArtifactError(err error) error {
	if err == nil {
		return nil
	}
	return artifactError{err}
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
