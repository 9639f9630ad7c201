// Package play plays one SILO-BENCH run into a directory: who plays it
// (Players: a scripted team by name, LLM agents, which NewLLMAgent
// builds from an LLMConfig, or a mixed Team of several models), its limits, and the files it leaves (the run database, the tool-call log,
// result.json, and for LLM agents the turn log). `coordbench silo run`
// calls Run directly; package suite calls it once per case and adds the
// manifest that makes a suite resumable.
//
// Layers: round runs the synchronous rounds of a team in memory; llmagent
// builds model-backed teams; this package joins them to files; suite
// repeats it over a grid of cases.
package play

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

// Files of a run directory (the LLM agents' turn log is
// llmagent.FileTurns and llmagent.FileTiming).
const (
	FileResult = "result.json"
	FileDB     = "run.db"
	FileCalls  = "calls.jsonl"
)

// Limits are the round and per-turn caps of a run, and the message format
// and order of its protocol ("" is the published str conversion, and the
// published random order seeded by OrderSeed).
type Limits struct {
	MaxRounds       int
	MaxCallsPerTurn int
	MessageFormat   proto.MessageFormat
	MessageOrder    proto.MessageOrder
}

// Order is the message order, the default (random) filled in.
func (l Limits) Order() proto.MessageOrder {
	if l.MessageOrder == "" {
		return proto.OrderRandom
	}
	return l.MessageOrder
}

// OrderSeed seeds the random message order of a run of in: FNV-1a of
// "silo/message-order", the instance's mode, task id, N and seed, so that
// a run and its replay deliver alike and two cases draw apart
// (docs/silo-protocols.md).
func OrderSeed(in *task.Instance) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "silo/message-order\x00%s\x00%s\x00%d\x00%d", in.Mode, in.Task.ID, in.N, in.Seed)
	return h.Sum64()
}

// Format is the message format, the default filled in.
func (l Limits) Format() proto.MessageFormat {
	if l.MessageFormat == "" {
		return proto.FormatStr
	}
	return l.MessageFormat
}

// Run plays one run of instance in with the given players into dir
// (which must exist and hold no run): the run database (FileDB), the
// tool-call log (FileCalls), for LLM agents the turn log (turns.jsonl,
// timing.jsonl), and result.json (FileResult), whose bytes it returns with
// the result. coordbench silo run and every suite case use it. A run an
// agent aborted (round.ErrAbort: a dead model, a replay miss) is written
// all the same, with status aborted, and returned with its error.
func Run(ctx context.Context, in *task.Instance, p proto.Protocol, players Players, lim Limits, dir string) (res *round.Result, b []byte, err error) {
	ctx, span := startRun(ctx, in, p, players)
	defer func() { endRun(span, res, err) }()
	agents, team, models, err := players.team(in, p, dir)
	if err != nil {
		return nil, nil, err
	}
	if team != nil {
		// A run that fails keeps the turns it made, and their usage, in
		// its partial turn log; a log that could not be written is said,
		// since the usage read from it falls short.
		defer func() {
			if cerr := team.CloseJournal(); cerr != nil && err != nil {
				err = errors.Join(err, fmt.Errorf("the partial turn log: %w", cerr))
			}
		}()
	}
	writeLog := func(st *proto.Store) error {
		if team != nil {
			if err := team.WriteLogs(dir, st); err != nil {
				return err
			}
		}
		entries, err := st.Log()
		if err != nil {
			return err
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		for i := range entries {
			if err := enc.Encode(&entries[i]); err != nil {
				return err
			}
		}
		return os.WriteFile(filepath.Join(dir, FileCalls), []byte(b.String()), 0o644)
	}
	res, err = round.Run(ctx, round.Config{Instance: in, Protocol: p, MaxRounds: lim.MaxRounds, MaxCallsPerTurn: lim.MaxCallsPerTurn,
		Options: proto.Options{MessageFormat: lim.Format(), MessageOrder: lim.Order(), OrderSeed: OrderSeed(in),
			Consensus: players.Scaffold().Consensus},
		DB: filepath.Join(dir, FileDB), OnEnd: writeLog, Models: models}, agents)
	if err != nil && (res == nil || res.Status != round.StatusAborted) {
		return nil, nil, err
	}
	res.Requests = players.requests()
	// An aborted run is written too (status aborted), and its error
	// returned: a run that is not a result.
	b = atomicfs.MarshalLine(res)
	if werr := os.WriteFile(filepath.Join(dir, FileResult), b, 0o644); werr != nil {
		return nil, nil, errors.Join(err, werr)
	}
	return res, b, err
}
