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
// Sent counts messages or broadcasts sent (sfs: file writes applied);
// Received counts what receive_messages delivered plus read_file hits (the
// store's "received" tally).
type Graph struct {
	N        int
	W        []int64
	Sent     []int64
	Received []int64
}

func (g *Graph) add(u, v int, w int64) { g.W[u*g.N+v] += w }

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
	g := &Graph{N: n, W: make([]int64, n*n), Sent: make([]int64, n), Received: make([]int64, n)}
	if err := fillGraph(context.Background(), db, g, p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// graphQueries are the queries behind a Graph for protocol p: edges
// gives (from, to, weight) rows (none for broadcast, whose edges follow
// from the broadcasts sent), sent gives (agent, count) rows.
func graphQueries(p proto.Protocol) (edges, sent string, ok bool) {
	switch p {
	case proto.P2P:
		return `SELECT sender, recipient, count(*) FROM messages GROUP BY sender, recipient`,
			`SELECT sender, count(*) FROM messages GROUP BY sender`, true
	case proto.Broadcast:
		return "", `SELECT sender, count(*) FROM broadcasts GROUP BY sender`, true
	case proto.SFS:
		// A hit's result names the entry's last writer (metadata.modified_by).
		return `SELECT json_extract(result, '$.metadata.modified_by') AS w, agent, count(*) FROM calls
			WHERE tool = 'read_file' AND error IS NULL AND json_valid(result) AND json_extract(result, '$.success') = 1
			AND json_type(result, '$.metadata.modified_by') = 'integer' GROUP BY w, agent`,
			`SELECT agent, count(*) FROM file_ops WHERE op = 'write' AND applied = 1 GROUP BY agent`, true
	}
	return "", "", false
}

// receivedQuery gives (agent, count) rows of the store's received tally.
const receivedQuery = `SELECT agent, sum(received) FROM tallies GROUP BY agent`

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
				g.add(int(c[0]), int(c[1]), c[2])
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	perAgent := func(query string, dst []int64) error {
		return eachInts(ctx, db, query, func(c []int64) error {
			if err := in(c[0]); err != nil {
				return err
			}
			dst[c[0]] += c[1]
			return nil
		})
	}
	if err := perAgent(sent, g.Sent); err != nil {
		return err
	}
	if proto.Protocol(p) == proto.Broadcast { // each broadcast goes to every other agent
		for u, k := range g.Sent {
			for v := range g.N {
				if v != u {
					g.add(u, v, k)
				}
			}
		}
	}
	return perAgent(receivedQuery, g.Received)
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
