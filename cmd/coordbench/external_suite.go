package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
)

// externalMaker runs one external runner process per suite case
// (harness.DirControllerMaker): its stderr and protocol summary land in
// the case's directory, and a runner that failed fails the case (it runs
// again on the next run).
type externalMaker struct {
	command string
	timeout time.Duration

	mu   sync.Mutex
	logs map[coord.Controller]*os.File
}

func newExternalMaker(command string, timeout time.Duration) (*externalMaker, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("--controller-timeout must be positive")
	}
	return &externalMaker{command: command, timeout: timeout, logs: map[coord.Controller]*os.File{}}, nil
}

func (m *externalMaker) Name() string      { return extctl.Name }
func (m *externalMaker) Model() string     { return "" }
func (m *externalMaker) Framework() string { return "" }
func (m *externalMaker) Identity() string  { return m.command }

// New is not used: an external controller needs its case's directory.
func (m *externalMaker) New(uint64) (coord.Controller, error) {
	return nil, fmt.Errorf("an external runner needs its case directory")
}

// NewForCase starts the runner of case c with its stderr in dir.
func (m *externalMaker) NewForCase(ctx context.Context, c harness.Case, dir string) (coord.Controller, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, extctl.StderrFile))
	if err != nil {
		return nil, err
	}
	ctrl, err := extctl.Start(ctx, extctl.Config{Command: m.command, Timeout: m.timeout, Stderr: logf,
		Episode: extctl.EpisodeOf(factory.Compile(c.Instance.Inst), c.Paradigm, c.Seed)})
	if err != nil {
		logf.Close()
		return nil, err
	}
	m.mu.Lock()
	m.logs[ctrl] = logf
	m.mu.Unlock()
	return ctrl, nil
}

// EndCase sends episode_end with the metrics, stops the runner and writes
// controller.json; a runner failure fails the case.
func (m *externalMaker) EndCase(ctrl coord.Controller, dir string) error {
	c, ok := ctrl.(*extctl.Controller)
	if !ok {
		return nil
	}
	var metrics any
	if b, err := os.ReadFile(filepath.Join(dir, harness.FileMetrics)); err == nil && json.Valid(b) {
		metrics = json.RawMessage(b)
	}
	failed := c.End(metrics)
	m.mu.Lock()
	if logf := m.logs[ctrl]; logf != nil {
		logf.Close()
		delete(m.logs, ctrl)
	}
	m.mu.Unlock()
	if err := extctl.WriteSummary(filepath.Join(dir, extctl.SummaryFile), c.Summary()); err != nil {
		return err
	}
	if failed != nil {
		return fmt.Errorf("external runner failed: %w (see %s)", failed, extctl.StderrFile)
	}
	return nil
}
