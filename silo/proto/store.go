package proto

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)
)

// Protocol names one of SILO-BENCH's three communication protocols.
type Protocol string

// The three protocols.
const (
	P2P       Protocol = "p2p"       // private inboxes (the published "msg")
	Broadcast Protocol = "broadcast" // one global channel
	SFS       Protocol = "sfs"       // shared key-value "file system"
)

// schemaVersion is bumped when the table layout changes.
const schemaVersion = "1"

// Options bounds what one tool call may carry. Zero fields take the defaults.
type Options struct {
	// MaxContentBytes bounds a message, broadcast, file content or answer
	// (default 64 KiB). Strings are measured in UTF-8 bytes of the text,
	// other JSON values by their compact JSON encoding.
	MaxContentBytes int
	// MaxPathBytes bounds an sfs path (default 256).
	MaxPathBytes int
	// MaxArgsBytes bounds the raw arguments of one call (default
	// 2*MaxContentBytes + 4096); larger calls are rejected unparsed and
	// logged as a size note only.
	MaxArgsBytes int
	// MessageFormat converts what other agents read (format.go); "" is
	// FormatStr, the published conversion.
	MessageFormat MessageFormat
	// MessageOrder is the order of one round's messages in what
	// receive_messages returns (order.go): OrderRandom, seeded with
	// OrderSeed, or OrderFixed; "" is OrderFixed.
	MessageOrder MessageOrder `json:",omitempty"`
	// OrderSeed seeds OrderRandom (with the round).
	OrderSeed uint64 `json:",omitempty"`
	// Consensus adds the consensus helper's tools (propose_answer, vote)
	// to the protocol's and tallies the votes (consensus.go). Off by
	// default: the published tool sets.
	Consensus bool `json:",omitempty"`
}

func (o Options) withDefaults() Options {
	if o.MaxContentBytes <= 0 {
		o.MaxContentBytes = 64 << 10
	}
	if o.MaxPathBytes <= 0 {
		o.MaxPathBytes = 256
	}
	if o.MaxArgsBytes <= 0 {
		o.MaxArgsBytes = 2*o.MaxContentBytes + 4096
	}
	if o.MessageFormat == "" {
		o.MessageFormat = FormatStr
	}
	if o.MessageOrder == "" {
		o.MessageOrder = OrderFixed
	}
	return o
}

// Submission is an agent's final answer.
type Submission struct {
	Answer json.RawMessage // compact JSON; "null" if the call carried none
	Round  int             // round of the submit_result call
	// At is the submit_result call's place in the agent's calls (Round,
	// and its sequence in the turn).
	At   Pos
	Seen []int // the agent's provenance set when it submitted
}

// LogEntry is one row of the tool-call log.
type LogEntry struct {
	Round  int             `json:"round"`
	Agent  int             `json:"agent"`
	Seq    int             `json:"seq"` // call index within the agent's turn, from 0
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"` // compact JSON (a JSON string holding the raw text if it was not JSON)
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error,omitempty"` // non-empty iff the call was rejected (counted in Tally.Errors)
}

// message is a P2P message or a broadcast.
type message struct {
	id      int64
	round   int
	sender  int
	seq     int
	to      int // -1 for broadcasts
	content string
	prov    bitset
}

type fileEntry struct {
	content    json.RawMessage
	modifiedBy int
	round      int
	seq        int // the write's call sequence in its author's turn
	ord        int64
	prov       bitset
}

type fileOp struct {
	seq     int
	del     bool
	path    string
	content json.RawMessage
	prov    bitset
	applied bool
}

type agentState struct {
	id        int
	seen      bitset
	seenDirty bool
	submitted bool
	sub       Submission
	newSub    bool

	// per round
	turnDone bool
	seq      int
	log      []LogEntry
	tally    Tally

	inbox   []*message // p2p: visible, unread, in delivery order
	readIDs []int64    // p2p: ids returned this round
	out     []*message // p2p and broadcast: sent this round
	cursor  int        // broadcast: index into Store.bcasts of the next unseen broadcast
	curMove bool
	ops     []*fileOp   // sfs: writes and deletes this round
	props   []*proposal // consensus helper: proposals this round
	votes   []*vote     // consensus helper: votes this round

	got []delivery // every content read, in order (Deliveries)
}

// Store holds one run's communication state. The working state is kept in
// memory; everything (messages, broadcasts, file versions and snapshot,
// provenance, submissions, the tool-call log, tallies) is written to the
// SQLite database in one transaction per round, at EndRound.
//
// Store is safe for concurrent use. Calls of different agents within a round
// may arrive in any order; results, the log and the database do not depend
// on that order (see the package documentation). One agent's calls must be
// made sequentially.
type Store struct {
	mu     sync.Mutex
	db     *sql.DB
	path   string
	proto  Protocol
	n      int
	opts   Options
	round  int // current (open) or last ended round
	open   bool
	broken error

	agents  []*agentState
	nextMsg int64
	bcasts  []*message
	files   map[string]*fileEntry
	order   []string // visible file paths in insertion order
	nextOrd int64

	byAgent []Tally
	byRound []Tally // index = round; [0] unused
	total   Tally

	cons *consensusState // nil unless Options.Consensus
}

// Open creates a run database at path (which must not already hold a run)
// for protocol p and nAgents agents. path may be ":memory:".
func Open(path string, p Protocol, nAgents int, opts Options) (*Store, error) {
	switch p {
	case P2P, Broadcast, SFS:
	default:
		return nil, fmt.Errorf("proto: unknown protocol %q", p)
	}
	if nAgents < 1 {
		return nil, fmt.Errorf("proto: nAgents = %d, need >= 1", nAgents)
	}
	if path == "" {
		return nil, errors.New("proto: empty database path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("proto: %s: path must not contain '?' or '#'", path)
	}
	if path != ":memory:" {
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("proto: %s: %w", path, err)
			}
		}
	}
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("proto: %s: %w", path, err)
	}
	// All database work happens under Store.mu; one connection also keeps
	// ":memory:" a single database.
	db.SetMaxOpenConns(1)
	opts = opts.withDefaults()
	if _, err := ParseMessageFormat(string(opts.MessageFormat)); err != nil {
		return nil, fmt.Errorf("proto: %w", err)
	}
	if _, err := ParseMessageOrder(string(opts.MessageOrder)); err != nil {
		return nil, fmt.Errorf("proto: %w", err)
	}
	s := &Store{
		db: db, path: path, proto: p, n: nAgents, opts: opts,
		files:   map[string]*fileEntry{},
		byAgent: make([]Tally, nAgents),
		byRound: make([]Tally, 1),
		nextMsg: 1,
	}
	if opts.Consensus {
		s.cons = newConsensus(nAgents)
	}
	for i := range nAgents {
		a := &agentState{id: i, seen: newBitset(nAgents)}
		a.seen.add(i)
		s.agents = append(s.agents, a)
	}
	if err := s.init(); err != nil {
		db.Close()
		return nil, fmt.Errorf("proto: %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) init() error {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var k int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'meta'`).Scan(&k); err != nil {
		return err
	}
	if k > 0 {
		return errors.New("database already holds a run (one database per run)")
	}
	optsJSON, _ := json.Marshal(s.opts)
	stmts := []string{
		`CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
		`CREATE TABLE agents (id INTEGER PRIMARY KEY, seen TEXT NOT NULL, bcast_cursor INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY, round INTEGER NOT NULL, sender INTEGER NOT NULL,
			seq INTEGER NOT NULL, recipient INTEGER NOT NULL, content TEXT NOT NULL, provenance TEXT NOT NULL,
			read_round INTEGER)`,
		`CREATE INDEX messages_recipient ON messages (recipient, id)`,
		`CREATE TABLE broadcasts (id INTEGER PRIMARY KEY, round INTEGER NOT NULL, sender INTEGER NOT NULL,
			seq INTEGER NOT NULL, content TEXT NOT NULL, provenance TEXT NOT NULL)`,
		`CREATE TABLE file_ops (round INTEGER NOT NULL, agent INTEGER NOT NULL, seq INTEGER NOT NULL,
			op TEXT NOT NULL, path TEXT NOT NULL, content TEXT, provenance TEXT, applied INTEGER NOT NULL,
			PRIMARY KEY (round, agent, seq)) WITHOUT ROWID`,
		`CREATE TABLE files (path TEXT PRIMARY KEY, content TEXT NOT NULL, modified_by INTEGER NOT NULL,
			modified_at_round INTEGER NOT NULL, ord INTEGER NOT NULL, provenance TEXT NOT NULL) WITHOUT ROWID`,
		`CREATE TABLE submissions (agent INTEGER PRIMARY KEY, round INTEGER NOT NULL, answer TEXT NOT NULL,
			seen TEXT NOT NULL)`,
		`CREATE TABLE calls (round INTEGER NOT NULL, agent INTEGER NOT NULL, seq INTEGER NOT NULL,
			tool TEXT NOT NULL, args TEXT NOT NULL, result TEXT NOT NULL, error TEXT,
			PRIMARY KEY (round, agent, seq)) WITHOUT ROWID`,
		`CREATE TABLE tallies (round INTEGER NOT NULL, agent INTEGER NOT NULL, calls TEXT NOT NULL,
			errors INTEGER NOT NULL, messages_sent INTEGER NOT NULL, bytes_sent INTEGER NOT NULL,
			writes INTEGER NOT NULL, reads INTEGER NOT NULL, received INTEGER NOT NULL,
			reads_of_others INTEGER NOT NULL, m INTEGER NOT NULL,
			PRIMARY KEY (round, agent)) WITHOUT ROWID`,
		`CREATE TABLE rounds (round INTEGER PRIMARY KEY, m INTEGER NOT NULL, reads_of_others INTEGER NOT NULL)`,
	}
	if s.cons != nil {
		stmts = append(stmts,
			`CREATE TABLE proposals (id TEXT PRIMARY KEY, round INTEGER NOT NULL, proposer INTEGER NOT NULL,
				seq INTEGER NOT NULL, value TEXT NOT NULL, provenance TEXT NOT NULL) WITHOUT ROWID`,
			`CREATE TABLE votes (round INTEGER NOT NULL, agent INTEGER NOT NULL, seq INTEGER NOT NULL,
				proposal TEXT NOT NULL, agree INTEGER NOT NULL, PRIMARY KEY (round, agent, seq)) WITHOUT ROWID`)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	for _, kv := range [][2]string{
		{"schema", schemaVersion}, {"protocol", string(s.proto)},
		{"n_agents", fmt.Sprint(s.n)}, {"options", string(optsJSON)},
	} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (k, v) VALUES (?, ?)`, kv[0], kv[1]); err != nil {
			return err
		}
	}
	for _, a := range s.agents {
		if _, err := tx.ExecContext(ctx, `INSERT INTO agents (id, seen) VALUES (?, ?)`, a.id, a.seen.json()); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Protocol returns the store's protocol.
func (s *Store) Protocol() Protocol { return s.proto }

// N returns the number of agents.
func (s *Store) N() int { return s.n }

// BeginRound opens round r, which must be the round after the last one
// ended (the first round is 1). Everything written up to round r-1 is
// visible in round r.
func (s *Store) BeginRound(r int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	if s.open {
		return fmt.Errorf("proto: BeginRound(%d): round %d is still open", r, s.round)
	}
	if r != s.round+1 {
		return fmt.Errorf("proto: BeginRound(%d): next round is %d", r, s.round+1)
	}
	s.round = r
	s.open = true
	s.byRound = append(s.byRound, Tally{})
	for _, a := range s.agents {
		a.turnDone, a.seq = false, 0
	}
	return nil
}

// Round returns the current round (or the last ended one, 0 before the first).
func (s *Store) Round() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.round
}

// EndRound closes the current round: it applies the round's writes in the
// deterministic order (sender/agent id, then call sequence), so they are
// visible from the next round on, and writes the round to the database in
// one transaction. A database error here is returned and makes the Store
// unusable.
func (s *Store) EndRound() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	if !s.open {
		return errors.New("proto: EndRound: no round open")
	}
	r := s.round
	var newMsgs []*message
	touched := map[string]bool{}
	var touchedOrder []string
	for _, a := range s.agents { // agent id order, then call order
		newMsgs = append(newMsgs, a.out...)
	}
	arrange(newMsgs, s.proto, s.opts.MessageOrder, s.opts.OrderSeed, r)
	for _, m := range newMsgs { // delivery order
		m.id = s.nextMsg
		s.nextMsg++
		if s.proto == P2P {
			to := s.agents[m.to]
			to.inbox = append(to.inbox, m)
		} else {
			s.bcasts = append(s.bcasts, m)
		}
	}
	for _, a := range s.agents { // agent id order, then call order
		for _, op := range a.ops {
			e, ok := s.files[op.path]
			if op.del {
				if ok {
					delete(s.files, op.path)
					op.applied = true
				}
			} else {
				ord := s.nextOrd
				if ok {
					ord = e.ord
				} else {
					s.nextOrd++
				}
				s.files[op.path] = &fileEntry{content: op.content, modifiedBy: a.id, round: r, seq: op.seq, ord: ord, prov: op.prov}
				op.applied = true
			}
			if op.applied && !touched[op.path] {
				touched[op.path] = true
				touchedOrder = append(touchedOrder, op.path)
			}
		}
	}
	if len(touchedOrder) > 0 {
		s.order = s.order[:0]
		for p := range s.files {
			s.order = append(s.order, p)
		}
		sort.Slice(s.order, func(i, j int) bool { return s.files[s.order[i]].ord < s.files[s.order[j]].ord })
		// The published code's m for sfs: keys in this round's final
		// snapshot last modified in this round, credited to their writer.
		for _, p := range touchedOrder {
			if e, ok := s.files[p]; ok && e.round == r {
				s.agents[e.modifiedBy].tally.M++
			}
		}
	}
	props, votes := s.applyConsensus()
	for _, a := range s.agents {
		s.byAgent[a.id].add(&a.tally)
		s.byRound[r].add(&a.tally)
		s.total.add(&a.tally)
	}
	if err := s.flush(r, newMsgs, touchedOrder, props, votes); err != nil {
		s.broken = fmt.Errorf("proto: writing round %d: %w", r, err)
		return s.broken
	}
	for _, a := range s.agents {
		a.log, a.readIDs, a.out, a.ops = nil, nil, nil, nil
		a.tally = Tally{}
		a.seenDirty, a.curMove, a.newSub = false, false, false
	}
	s.open = false
	return nil
}

func (s *Store) flush(r int, newMsgs []*message, touched []string, props []*proposal, votes []*vote) error {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	prep := func(q string) (*sql.Stmt, error) { return tx.PrepareContext(ctx, q) }

	if len(newMsgs) > 0 {
		q := `INSERT INTO messages (id, round, sender, seq, recipient, content, provenance) VALUES (?, ?, ?, ?, ?, ?, ?)`
		if s.proto == Broadcast {
			q = `INSERT INTO broadcasts (id, round, sender, seq, content, provenance) VALUES (?, ?, ?, ?, ?, ?)`
		}
		st, err := prep(q)
		if err != nil {
			return err
		}
		for _, m := range newMsgs {
			if s.proto == Broadcast {
				_, err = st.ExecContext(ctx, m.id, m.round, m.sender, m.seq, m.content, m.prov.json())
			} else {
				_, err = st.ExecContext(ctx, m.id, m.round, m.sender, m.seq, m.to, m.content, m.prov.json())
			}
			if err != nil {
				return err
			}
		}
	}
	var stRead, stAgent, stSub, stOp, stCall, stTally *sql.Stmt
	lazy := func(p **sql.Stmt, q string) (*sql.Stmt, error) {
		if *p == nil {
			st, err := prep(q)
			if err != nil {
				return nil, err
			}
			*p = st
		}
		return *p, nil
	}
	for _, a := range s.agents {
		for _, id := range a.readIDs {
			st, err := lazy(&stRead, `UPDATE messages SET read_round = ? WHERE id = ?`)
			if err != nil {
				return err
			}
			if _, err := st.ExecContext(ctx, r, id); err != nil {
				return err
			}
		}
		if a.seenDirty || a.curMove {
			st, err := lazy(&stAgent, `UPDATE agents SET seen = ?, bcast_cursor = ? WHERE id = ?`)
			if err != nil {
				return err
			}
			if _, err := st.ExecContext(ctx, a.seen.json(), a.cursor, a.id); err != nil {
				return err
			}
		}
		if a.newSub {
			st, err := lazy(&stSub, `INSERT INTO submissions (agent, round, answer, seen) VALUES (?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			seen, _ := json.Marshal(a.sub.Seen)
			if _, err := st.ExecContext(ctx, a.id, a.sub.Round, string(a.sub.Answer), string(seen)); err != nil {
				return err
			}
		}
		for _, op := range a.ops {
			st, err := lazy(&stOp, `INSERT INTO file_ops (round, agent, seq, op, path, content, provenance, applied) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			kind, content, prov := "write", any(string(op.content)), any(op.prov.json())
			if op.del {
				kind, content, prov = "delete", nil, nil
			}
			if _, err := st.ExecContext(ctx, r, a.id, op.seq, kind, op.path, content, prov, op.applied); err != nil {
				return err
			}
		}
		for _, e := range a.log {
			st, err := lazy(&stCall, `INSERT INTO calls (round, agent, seq, tool, args, result, error) VALUES (?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			var errCol any
			if e.Error != "" {
				errCol = e.Error
			}
			if _, err := st.ExecContext(ctx, e.Round, e.Agent, e.Seq, e.Tool, string(e.Args), string(e.Result), errCol); err != nil {
				return err
			}
		}
		if t := &a.tally; len(t.Calls) > 0 || t.M > 0 || t.Received > 0 {
			st, err := lazy(&stTally, `INSERT INTO tallies (round, agent, calls, errors, messages_sent, bytes_sent, writes, reads, received, reads_of_others, m) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			calls, _ := json.Marshal(t.Calls)
			if _, err := st.ExecContext(ctx, r, a.id, string(calls), t.Errors, t.MessagesSent, t.BytesSent, t.Writes, t.Reads, t.Received, t.ReadsOfOthers, t.M); err != nil {
				return err
			}
		}
	}
	if len(touched) > 0 {
		up, err := prep(`INSERT INTO files (path, content, modified_by, modified_at_round, ord, provenance) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (path) DO UPDATE SET content = excluded.content, modified_by = excluded.modified_by,
			modified_at_round = excluded.modified_at_round, ord = excluded.ord, provenance = excluded.provenance`)
		if err != nil {
			return err
		}
		del, err := prep(`DELETE FROM files WHERE path = ?`)
		if err != nil {
			return err
		}
		for _, p := range touched {
			if e, ok := s.files[p]; ok {
				_, err = up.ExecContext(ctx, p, string(e.content), e.modifiedBy, e.round, e.ord, e.prov.json())
			} else {
				_, err = del.ExecContext(ctx, p)
			}
			if err != nil {
				return err
			}
		}
	}
	for _, p := range props {
		if _, err := tx.ExecContext(ctx, `INSERT INTO proposals (id, round, proposer, seq, value, provenance) VALUES (?, ?, ?, ?, ?, ?)`,
			p.id, p.round, p.proposer, p.seq, string(p.value), p.prov.json()); err != nil {
			return err
		}
	}
	for _, v := range votes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO votes (round, agent, seq, proposal, agree) VALUES (?, ?, ?, ?, ?)`,
			v.round, v.agent, v.seq, v.prop.id, v.agree); err != nil {
			return err
		}
	}
	rt := &s.byRound[r]
	if _, err := tx.ExecContext(ctx, `INSERT INTO rounds (round, m, reads_of_others) VALUES (?, ?, ?)`, r, rt.M, rt.ReadsOfOthers); err != nil {
		return err
	}
	return tx.Commit()
}

// Submitted returns the agent's answer and whether it has submitted.
func (s *Store) Submitted(agent int) (json.RawMessage, bool) {
	sub, ok := s.Submission(agent)
	return sub.Answer, ok
}

// Submission returns the agent's submission (answer, round, provenance).
func (s *Store) Submission(agent int) (Submission, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if agent < 0 || agent >= s.n || !s.agents[agent].submitted {
		return Submission{}, false
	}
	sub := s.agents[agent].sub
	sub.Seen = append([]int(nil), sub.Seen...)
	return sub, true
}

// Seen returns the agent's provenance set: the sorted shard indices it has
// seen directly or transitively. Agent i starts with {i}.
func (s *Store) Seen(agent int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if agent < 0 || agent >= s.n {
		return nil
	}
	return s.agents[agent].seen.list()
}

// Log reads the tool-call log of all ended rounds from the database, in
// (round, agent, seq) order.
func (s *Store) Log() ([]LogEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, err := s.db.Query(`SELECT round, agent, seq, tool, args, result, coalesce(error, '') FROM calls ORDER BY round, agent, seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LogEntry
	for rows.Next() {
		var e LogEntry
		var args, res string
		if err := rows.Scan(&e.Round, &e.Agent, &e.Seq, &e.Tool, &args, &res, &e.Error); err != nil {
			return nil, err
		}
		e.Args, e.Result = json.RawMessage(args), json.RawMessage(res)
		out = append(out, e)
	}
	return out, rows.Err()
}

// DB returns the underlying database handle, for read-only queries by
// analysis code. Do not write through it.
func (s *Store) DB() *sql.DB { return s.db }

// Path returns the database path.
func (s *Store) Path() string { return s.path }

// Close closes the database. Calls of a round not ended are not persisted.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db.Close()
}
