package analyze

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"

	_ "modernc.org/sqlite" // the "sqlite" driver (pure Go)

	"github.com/coordbench/coordbench/silo/proto"
)

// Graph is a run's communication graph: W[u*N+v] counts the units of
// information agent u offered agent v (u != v):
//
//   - p2p: messages u sent to v;
//   - broadcast: broadcasts u sent (each goes to every other agent);
//   - sfs: read_file hits by v on an entry last written by u (writes are
//     addressed to nobody, so the shared store's edges are its reads).
//
// First[u*N+v] is the round of the first such unit (0: none) and
// Submit[u] the round agent u submitted in (0: never).
//
// Sent counts messages or broadcasts sent (sfs: file writes applied);
// Received counts what receive_messages delivered plus read_file hits (the
// store's "received" tally).
type Graph struct {
	N        int
	W        []int64
	First    []int
	Submit   []int
	Sent     []int64
	Received []int64
}

// add counts w units from u to v, the first of them in round first.
func (g *Graph) add(u, v int, w int64, first int) {
	g.W[u*g.N+v] += w
	if f := &g.First[u*g.N+v]; *f == 0 || first < *f {
		*f = first
	}
}

// openReadOnly opens a run database read only (no journal or WAL is
// created or changed).
func openReadOnly(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: filepath.ToSlash(abs), RawQuery: "mode=ro&_query_only=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// readGraph reads the communication graph of the run database at path,
// checking that it holds a run of protocol p with n agents.
func readGraph(path, p string, n int) (*Graph, error) {
	db, err := openReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer db.Close()
	g := &Graph{N: n, W: make([]int64, n*n), First: make([]int, n*n), Submit: make([]int, n), Sent: make([]int64, n),
		Received: make([]int64, n)}
	if err := fillGraph(context.Background(), db, g, p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// graphQueries are the queries behind a Graph for protocol p: edges
// gives (from, to, weight, first round) rows (none for broadcast, whose
// edges follow from the broadcasts sent), sent gives (agent, count, first
// round) rows.
func graphQueries(p proto.Protocol) (edges, sent string, ok bool) {
	switch p {
	case proto.P2P:
		return `SELECT sender, recipient, count(*), min(round) FROM messages GROUP BY sender, recipient`,
			`SELECT sender, count(*), min(round) FROM messages GROUP BY sender`, true
	case proto.Broadcast:
		return "", `SELECT sender, count(*), min(round) FROM broadcasts GROUP BY sender`, true
	case proto.SFS:
		// A hit's result names the entry's last writer (metadata.modified_by).
		return `SELECT json_extract(result, '$.metadata.modified_by') AS w, agent, count(*), min(round) FROM calls
			WHERE tool = 'read_file' AND error IS NULL AND json_valid(result) AND json_extract(result, '$.success') = 1
			AND json_type(result, '$.metadata.modified_by') = 'integer' GROUP BY w, agent`,
			`SELECT agent, count(*), min(round) FROM file_ops WHERE op = 'write' AND applied = 1 GROUP BY agent`, true
	}
	return "", "", false
}

// receivedQuery gives (agent, count) rows of the store's received tally,
// submitQuery (agent, round) rows of the submissions.
const (
	receivedQuery = `SELECT agent, sum(received) FROM tallies GROUP BY agent`
	submitQuery   = `SELECT agent, round FROM submissions`
)

func fillGraph(ctx context.Context, db *sql.DB, g *Graph, p string) error {
	meta, err := readMeta(ctx, db)
	if err != nil {
		return fmt.Errorf("not a SILO-BENCH run database: %w", err)
	}
	if meta["protocol"] != p || meta["n_agents"] != strconv.Itoa(g.N) {
		return fmt.Errorf("run database holds protocol %q with %s agents, result.json says %q with %d",
			meta["protocol"], meta["n_agents"], p, g.N)
	}
	edges, sent, ok := graphQueries(proto.Protocol(p))
	if !ok {
		return fmt.Errorf("unknown protocol %q", p)
	}
	in := func(ids ...int64) error {
		for _, id := range ids {
			if id < 0 || id >= int64(g.N) {
				return fmt.Errorf("agent id %d out of range 0..%d", id, g.N-1)
			}
		}
		return nil
	}
	if edges != "" {
		err := eachInts(ctx, db, edges, func(c []int64) error {
			if err := in(c[0], c[1]); err != nil {
				return err
			}
			if c[0] != c[1] {
				g.add(int(c[0]), int(c[1]), c[2], int(c[3]))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	firstSent := make([]int, g.N)
	perAgent := func(query string, f func(agent int, v int64, c []int64)) error {
		return eachInts(ctx, db, query, func(c []int64) error {
			if err := in(c[0]); err != nil {
				return err
			}
			f(int(c[0]), c[1], c)
			return nil
		})
	}
	err = perAgent(sent, func(a int, v int64, c []int64) { g.Sent[a] += v; firstSent[a] = int(c[2]) })
	if err != nil {
		return err
	}
	if proto.Protocol(p) == proto.Broadcast { // each broadcast goes to every other agent
		for u, k := range g.Sent {
			for v := range g.N {
				if v != u && k > 0 {
					g.add(u, v, k, firstSent[u])
				}
			}
		}
	}
	if err := perAgent(submitQuery, func(a int, v int64, _ []int64) { g.Submit[a] = int(v) }); err != nil {
		return err
	}
	return perAgent(receivedQuery, func(a int, v int64, _ []int64) { g.Received[a] += v })
}

// eachInts runs q, whose columns are all integers, and calls f with each
// row's values.
func eachInts(ctx context.Context, db *sql.DB, q string, f func(c []int64) error) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]int64, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := f(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// readMeta reads the run database's meta table.
func readMeta(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT k, v FROM meta`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	meta := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		meta[k] = v
	}
	return meta, rows.Err()
}
