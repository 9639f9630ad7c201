package extctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm"
)

// StderrFile is the name of the runner's stderr log in a run directory;
// SummaryFile the name of its Summary.
const (
	StderrFile  = "controller_stderr.txt"
	SummaryFile = "controller.json"
)

// SessionConfig says how a command runs its external runner.
type SessionConfig struct {
	// Command is the runner's command line; Timeout bounds each answer
	// (Config.Timeout).
	Command string
	Timeout time.Duration
	// Proxy, if set, configures the model-call proxy the session serves to
	// its runners; its Cache is ignored: the session opens CachePath ("":
	// no cache) for it.
	Proxy     *ProxyConfig
	CachePath string
	// StopOnInterrupt stops a runner on SIGINT or SIGTERM. A runner has a
	// process group of its own, out of reach of the terminal's Ctrl-C:
	// without this, an interrupt that coordbench catches leaves it
	// running. Its episode then ends at once on fallbacks, and its
	// artifacts are written.
	StopOnInterrupt bool
}

// Session runs the external runner of one command: one runner process per
// episode, with its stderr in the episode directory's StderrFile and its
// Summary in SummaryFile, and the model-call proxy they share. A Session
// is the harness.DirControllerMaker of the suites and cases that run
// it (NewForCase, EndCase); a single run uses Start and End. Close
// releases everything and reports the failures of the runners ended by
// End. Start, End and their case variants may be called concurrently.
type Session struct {
	cfg   SessionConfig
	proxy *Proxy
	cache *llm.Cache

	mu       sync.Mutex
	running  map[*Controller]runner
	failures []error // runner failures End kept for Close
}

// runner is what a Session holds for a runner it started.
type runner struct {
	stderr *os.File
	stop   func() // releases the interrupt handler
}

// OpenSession opens a session: with cfg.Proxy, it opens the cache and
// starts the proxy.
func OpenSession(cfg SessionConfig) (*Session, error) {
	s := &Session{cfg: cfg, running: map[*Controller]runner{}}
	if cfg.Proxy == nil {
		return s, nil
	}
	pc := *cfg.Proxy
	pc.Options.Cache = nil
	if cfg.CachePath != "" {
		cache, err := llm.OpenCache(cfg.CachePath)
		if err != nil {
			return nil, err
		}
		s.cache, pc.Options.Cache = cache, cache
	}
	p, err := NewProxy(pc)
	if err == nil {
		s.proxy = p
		_, err = p.Start()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Start starts the runner of episode ep, for the life of ctx, with its
// stderr in dir (created if needed). End must follow the episode.
func (s *Session) Start(ctx context.Context, ep Episode, dir string) (*Controller, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	stderr, err := os.Create(filepath.Join(dir, StderrFile))
	if err != nil {
		return nil, err
	}
	stop := func() {}
	if s.cfg.StopOnInterrupt {
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
	c, err := Start(ctx, Config{Command: s.cfg.Command, Timeout: s.cfg.Timeout, Stderr: stderr, Episode: ep, Proxy: s.proxy})
	if err != nil {
		stop()
		stderr.Close()
		return nil, err
	}
	s.mu.Lock()
	s.running[c] = runner{stderr: stderr, stop: stop}
	s.mu.Unlock()
	return c, nil
}

// End ends the runner of an episode run into dir: it sends episode_end
// with dir's metrics.json, stops the runner and writes dir's SummaryFile,
// and returns the Summary. The error is the write's; the runner's
// failure is in the Summary, and Close returns it.
func (s *Session) End(c *Controller, dir string) (Summary, error) {
	sum, failed, err := s.end(c, dir)
	if failed != nil {
		s.mu.Lock()
		s.failures = append(s.failures, fmt.Errorf("%w (see %s)", failed, filepath.Join(dir, StderrFile)))
		s.mu.Unlock()
	}
	return sum, err
}

// end ends c and writes its summary into dir.
func (s *Session) end(c *Controller, dir string) (sum Summary, failed, writeErr error) {
	var metrics any
	if b, err := os.ReadFile(filepath.Join(dir, harness.FileMetrics)); err == nil && json.Valid(b) {
		metrics = json.RawMessage(b)
	}
	failed = c.End(metrics)
	s.release(c)
	sum = c.Summary()
	return sum, failed, WriteSummary(filepath.Join(dir, SummaryFile), sum)
}

// release closes what the session holds for c.
func (s *Session) release(c *Controller) {
	s.mu.Lock()
	r, ok := s.running[c]
	delete(s.running, c)
	s.mu.Unlock()
	if ok {
		r.stderr.Close()
		r.stop()
	}
}

// Close stops the runners that were not ended, closes the proxy and the
// cache, and returns the failures of the runners ended by End.
func (s *Session) Close() error {
	s.mu.Lock()
	var left []*Controller
	for c := range s.running {
		left = append(left, c)
	}
	failures := s.failures
	s.failures = nil
	s.mu.Unlock()
	for _, c := range left {
		c.Close()
		s.release(c)
	}
	if s.proxy != nil {
		s.proxy.Close()
	}
	if s.cache != nil {
		s.cache.Close()
	}
	return errors.Join(failures...)
}

// Name implements harness.ControllerMaker.
func (s *Session) Name() string { return Name }

// Model implements harness.ControllerMaker: the runner names its models
// only when it runs (Ready).
func (s *Session) Model() string { return "" }

// Framework implements harness.ControllerMaker (see Model).
func (s *Session) Framework() string { return "" }

// Identity implements harness.DirControllerMaker: the runner command.
func (s *Session) Identity() string { return s.cfg.Command }

// New implements harness.ControllerMaker; it is not used: a runner needs
// its case's directory (NewForCase).
func (s *Session) New(uint64) (coord.Controller, error) {
	return nil, errors.New("an external runner needs its case directory")
}

// NewForCase implements harness.DirControllerMaker: Start for case c.
func (s *Session) NewForCase(ctx context.Context, c harness.Case, dir string) (coord.Controller, error) {
	return s.Start(ctx, EpisodeOf(factory.Compile(c.Instance.Inst), c.Paradigm, c.Seed), dir)
}

// EndCase implements harness.DirControllerMaker: End, except that a
// runner failure fails the case instead of being kept for Close.
func (s *Session) EndCase(ctrl coord.Controller, dir string) error {
	c, ok := ctrl.(*Controller)
	if !ok {
		return nil
	}
	_, failed, err := s.end(c, dir)
	if err != nil {
		return err
	}
	if failed != nil {
		return fmt.Errorf("external runner failed: %w (see %s)", failed, StderrFile)
	}
	return nil
}
