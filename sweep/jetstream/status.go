package jetstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/suiterun"
)

// Files the coordinator writes into the experiment directory.
const (
	// StatusFile is the distributed sweep's progress, rewritten as it
	// changes (read by `sweep status DIR`).
	StatusFile = "dist_status.json"
	// DeadLetterFile lists dead-lettered cases, one JSON object a line.
	DeadLetterFile = "dead_letter.jsonl"
)

// States of a distributed sweep in StatusFile.
const (
	StateRunning     = "running"
	StateDone        = "done"
	StateInterrupted = "interrupted"
)

// Status is StatusFile: counts of the experiment's cases by state, the
// failed and dead-lettered ones by id. It holds no time stamps.
type Status struct {
	ExperimentID string `json:"experiment_id"`
	State        string `json:"state"`
	Store        string `json:"store"`
	Cases        int    `json:"cases"`
	Pending      int    `json:"pending"` // queued, not started
	Running      int    `json:"running"` // started by a worker, no outcome yet
	Done         int    `json:"done"`
	Failed       int    `json:"failed"`
	DeadLetter   int    `json:"dead_letter"`
	// Deliveries counts results received (a case redelivered after its
	// worker died and finished twice counts here twice, in Done once).
	Deliveries  int               `json:"deliveries"`
	FailedCases map[string]string `json:"failed_cases,omitempty"`
	DeadCases   []string          `json:"dead_cases,omitempty"`
	// Workers are the workers that started a case, by name.
	Workers []string `json:"workers,omitempty"`
}

func writeStatus(dir string, s *Status) error {
	return atomicfs.WriteFile(filepath.Join(dir, StatusFile), suiterun.TmpPrefix, atomicfs.MarshalLine(s))
}

// ReadStatus reads dir's StatusFile; the error wraps os.ErrNotExist if
// dir holds no distributed sweep.
func ReadStatus(dir string) (*Status, error) {
	path := filepath.Join(dir, StatusFile)
	if _, err := os.Lstat(path); err != nil {
		return nil, err
	}
	data, err := inputfile.Read(path, "sweep status", 16<<20)
	if err != nil {
		return nil, err
	}
	var s Status
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &s, nil
}

// String is the status for people, a few lines.
func (s *Status) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "distributed sweep of experiment %s (%s store): %s\n", short(s.ExperimentID), s.Store, s.State)
	fmt.Fprintf(&b, "cases: %d: %d pending, %d running, %d done, %d failed, %d dead-lettered\n",
		s.Cases, s.Pending, s.Running, s.Done, s.Failed, s.DeadLetter)
	for _, id := range slices.Sorted(maps.Keys(s.FailedCases)) {
		fmt.Fprintf(&b, "  failed: %s: %s\n", id, s.FailedCases[id])
	}
	for _, id := range s.DeadCases {
		fmt.Fprintf(&b, "  dead-lettered: %s (see %s)\n", id, DeadLetterFile)
	}
	return b.String()
}

func short(id string) string { return id[:min(12, len(id))] }
