package harness_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/harness/check"
	"github.com/coordbench/coordbench/des/policy"
)

// abortingController answers like the rule controller for a few steps,
// then aborts.
type abortingController struct {
	coord.Controller
	steps int
}

var errDown = errors.New("endpoint down")

func (c *abortingController) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	if c.steps == 0 {
		return nil, fmt.Errorf("%w: %w", coord.ErrAbort, errDown)
	}
	c.steps--
	return c.Controller.Act(ctx, d)
}

// A controller's ErrAbort ends the episode after its step is audited:
// status aborted, Result.Err carries the cause, and the artifacts are
// complete and pass the independent re-check.
func TestControllerAbortEndsTheEpisode(t *testing.T) {
	in, err := factory.Resolve("A3C9-1")
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := policy.New("rule", 1)
	dir := t.TempDir()
	const before = 3
	ep := harness.Episode{Plant: factory.Compile(in), Seed: 1, Mode: coord.Centralized(), Controller: &abortingController{Controller: rule, steps: before}}
	res, err := harness.RunToDir(context.Background(), ep, dir)
	if !errors.Is(err, coord.ErrAbort) || !errors.Is(err, errDown) || !errors.Is(res.Err, errDown) {
		t.Fatalf("RunToDir error = %v, Result.Err = %v; want both to wrap ErrAbort and the cause", err, res.Err)
	}
	if res.Metrics.Status != string(factory.Aborted) || res.Metrics.GDs != before+1 || res.Metrics.GTr != 1 {
		t.Errorf("metrics: status %q, G_ds %d, G_tr %d; want aborted after %d steps, truncated", res.Metrics.Status, res.Metrics.GDs, res.Metrics.GTr, before+1)
	}
	var m harness.Metrics
	b, err := os.ReadFile(filepath.Join(dir, harness.FileMetrics))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Status != "aborted" {
		t.Fatalf("metrics.json: status %q (%v)", m.Status, err)
	}
	// The aborted step's agents are audited as fallbacks, with the error.
	b, err = os.ReadFile(filepath.Join(dir, harness.FileDecisions))
	if err != nil {
		t.Fatal(err)
	}
	var last struct {
		Step   int    `json:"step"`
		Source string `json:"source"`
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatal(err)
		}
	}
	if last.Step != before || last.Source != string(coord.SourceFallback) {
		t.Errorf("last audit: step %d source %q; want step %d, fallback", last.Step, last.Source, before)
	}
	rep, err := check.Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("re-check: %v", rep.Problems)
	}
}

// stoppingController answers like the rule controller and closes stop
// after a few steps, as a Ctrl-C in the middle of an episode would.
type stoppingController struct {
	coord.Controller
	steps int
	stop  chan struct{}
}

func (c *stoppingController) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	if c.steps--; c.steps == 0 {
		close(c.stop)
	}
	return c.Controller.Act(ctx, d)
}

// Episode.Stop ends the episode before its next decision: status
// interrupted, Result.Err is ErrInterrupted, and the artifacts are
// complete and pass the re-check, which reports the status.
func TestStopInterruptsTheEpisode(t *testing.T) {
	in, err := factory.Resolve("A3C9-1")
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := policy.New("rule", 1)
	dir := t.TempDir()
	stop := make(chan struct{})
	ep := harness.Episode{Plant: factory.Compile(in), Seed: 1, Mode: coord.Centralized(),
		Controller: &stoppingController{Controller: rule, steps: 4, stop: stop}, Stop: stop}
	res, err := harness.RunToDir(context.Background(), ep, dir)
	if !errors.Is(err, harness.ErrInterrupted) {
		t.Fatalf("RunToDir error = %v, want ErrInterrupted", err)
	}
	if res.Metrics.Status != string(factory.Interrupted) || res.Metrics.GDs != 4 || res.Metrics.GTr != 1 {
		t.Errorf("metrics: status %q, G_ds %d, G_tr %d; want interrupted after 4 steps, truncated", res.Metrics.Status, res.Metrics.GDs, res.Metrics.GTr)
	}
	rep, err := check.Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Stats.Status != "interrupted" {
		t.Errorf("re-check: status %q, %v", rep.Stats.Status, rep.Problems)
	}
}

// A stop that comes while the controller answers the episode's last
// decision interrupts the episode too: the answer may be a fallback of a
// cancelled call, so the episode must not end done.
func TestStopDuringLastDecision(t *testing.T) {
	in, err := factory.Resolve("A3C9-1")
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := policy.New("rule", 1)
	full, err := harness.RunToDir(context.Background(), harness.Episode{Plant: factory.Compile(in), Seed: 1, Mode: coord.Centralized(), Controller: rule}, t.TempDir())
	if err != nil || full.Metrics.Status != "done" {
		t.Fatalf("full episode: %v, %q", err, full.Metrics.Status)
	}
	rule, _ = policy.New("rule", 1)
	stop := make(chan struct{})
	ep := harness.Episode{Plant: factory.Compile(in), Seed: 1, Mode: coord.Centralized(),
		Controller: &stoppingController{Controller: rule, steps: full.Metrics.GDs, stop: stop}, Stop: stop}
	res, err := harness.RunToDir(context.Background(), ep, t.TempDir())
	if !errors.Is(err, harness.ErrInterrupted) || res.Metrics.Status != string(factory.Interrupted) {
		t.Errorf("stopped during decision %d of %d: %v, status %q; want interrupted", full.Metrics.GDs, full.Metrics.GDs, err, res.Metrics.Status)
	}
}
