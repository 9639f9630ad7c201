package llmagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/task"
)

// Files written by Team.WriteLogs into a run directory.
const (
	FileTurns  = "turns.jsonl"  // TurnRecords, by round then agent
	FileTiming = "timing.jsonl" // Timings, in the same order
	// TableTurns is the run database's table of turns: one row per record,
	// with the record's JSON and its timing.
	TableTurns = "llm_turns"
)

// MaxTurnLine bounds one line of the turn log for its readers (silo show,
// silo analyze): the memory one record may take. The harness bounds what
// a line holds: a reply's text and native call arguments MaxInlineReply
// each (the whole is in the reply store), a call's arguments
// MaxLoggedArgs, its result and a tool-result message what the protocol
// returns (a receive result carries every message waiting: a team of 100
// agents that each sent a full-size 64 KiB message, about 6.5 MiB, and
// the next turn's input repeats it). 256 MiB leaves ample room for that
// and for JSON escaping (up to 6 bytes a character).
const MaxTurnLine = 256 << 20

// Team is the LLM agents of one run.
type Team struct {
	agents  []*Agent
	journal *journal // see Journal; nil without
}

// Journal makes the agents write each turn into the turn log in dir
// (FileTurns, FileTiming) as it ends, so that a run that does not reach
// its end leaves the turns it made, and their usage, in the order they
// ended. WriteLogs then writes the whole log in order; CloseJournal
// closes it when WriteLogs is not called (the run failed).
func (t *Team) Journal(dir string) error {
	j, err := openJournal(dir)
	if err != nil {
		return fmt.Errorf("llmagent: turn log: %w", err)
	}
	t.journal = j
	for _, a := range t.agents {
		a.journal = j
	}
	return nil
}

// CloseJournal closes the turn log that Journal opened (a no-op without
// one, or once closed) and reports the first error writing it.
func (t *Team) CloseJournal() error {
	if t.journal == nil {
		return nil
	}
	return t.journal.close()
}

// NewTeam builds the N agents of instance in over protocol p, sharing cfg
// (and so one model client and its endpoint limits).
func NewTeam(in *task.Instance, p proto.Protocol, cfg Config) (*Team, error) {
	return NewTeamOf(in, p, func(int) Config { return cfg })
}

// NewTeamOf builds the N agents of instance in over protocol p, agent i
// with cfgOf(i): a mixed team, each agent with its model's client (and
// Config.Label naming it).
func NewTeamOf(in *task.Instance, p proto.Protocol, cfgOf func(i int) Config) (*Team, error) {
	t := &Team{}
	for i := range in.N {
		a, err := New(in, p, i, cfgOf(i))
		if err != nil {
			return nil, err
		}
		t.agents = append(t.agents, a)
	}
	return t, nil
}

// Agents returns the agents for round.Run.
func (t *Team) Agents() []round.Agent {
	out := make([]round.Agent, len(t.agents))
	for i, a := range t.agents {
		out[i] = a
	}
	return out
}

// Records returns every agent's turns, ordered by round, then agent id.
func (t *Team) Records() ([]TurnRecord, []Timing) {
	var recs []TurnRecord
	var tims []Timing
	for _, a := range t.agents {
		recs = append(recs, a.records...)
		tims = append(tims, a.timings...)
	}
	idx := make([]int, len(recs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool {
		a, b := recs[idx[x]], recs[idx[y]]
		if a.Round != b.Round {
			return a.Round < b.Round
		}
		return a.Agent < b.Agent
	})
	r2, t2 := make([]TurnRecord, len(recs)), make([]Timing, len(recs))
	for i, j := range idx {
		r2[i], t2[i] = recs[j], tims[j]
	}
	return r2, t2
}

// WriteLogs writes the turn log into dir (FileTurns, FileTiming, the
// reply store DirReplies) and into the run database of st (TableTurns:
// the records as the log has them, long replies cut). Call it from round.Config.OnEnd.
// A journal (Journal) is closed first, and its error, if any, returned.
func (t *Team) WriteLogs(dir string, st *proto.Store) error {
	if err := t.CloseJournal(); err != nil {
		return err
	}
	recs, tims := t.Records()
	var turns, timing bytes.Buffer
	lines := make([][]byte, len(recs))
	for i := range recs {
		st, bodies := recs[i].stored()
		if err := putReplies(dir, bodies); err != nil {
			return fmt.Errorf("llmagent: %w", err)
		}
		b, err := marshalLine(&st)
		if err != nil {
			return fmt.Errorf("llmagent: turn log: %w", err)
		}
		lines[i] = b
		turns.Write(b)
		tb, _ := marshalLine(&tims[i])
		timing.Write(tb)
	}
	if err := os.WriteFile(filepath.Join(dir, FileTurns), turns.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, FileTiming), timing.Bytes(), 0o644); err != nil {
		return err
	}
	if st == nil {
		return nil
	}
	db := st.DB()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS ` + TableTurns + ` (
		round INTEGER NOT NULL, agent INTEGER NOT NULL, outcome TEXT NOT NULL,
		prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
		latency_ms REAL NOT NULL, attempts INTEGER NOT NULL, cached INTEGER NOT NULL,
		record TEXT NOT NULL, PRIMARY KEY (round, agent))`); err != nil {
		return err
	}
	for i, r := range recs {
		cached := 0
		if tims[i].Cached {
			cached = 1
		}
		if _, err := tx.Exec(`INSERT INTO `+TableTurns+` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.Round, r.Agent, r.Outcome, r.Usage.PromptTokens, r.Usage.CompletionTokens,
			tims[i].LatencyMS, tims[i].Attempts, cached, string(bytes.TrimRight(lines[i], "\n"))); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// marshalLine encodes v as one JSON line, without HTML escaping (the
// transcript holds model text with < and >).
func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
