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

func fillGraph(ctx context.Context, db *sql.DB, g *Graph, p string) error {
	meta, err := readMeta(ctx, db)
	if err != nil {
		return fmt.Errorf("not a SILO-BENCH run database: %w", err)
	}
	if meta["protocol"] != p || meta["n_agents"] != strconv.Itoa(g.N) {
		return fmt.Errorf("run database holds protocol %q with %s agents, result.json says %q with %d",
			meta["protocol"], meta["n_agents"], p, g.N)
	}
	in := func(ids ...int64) error {
		for _, id := range ids {
			if id < 0 || id >= int64(g.N) {
				return fmt.Errorf("agent id %d out of range 0..%d", id, g.N-1)
			}
		}
		return nil
	}
	switch proto.Protocol(p) {
	case proto.P2P:
		err := eachInts(ctx, db, `SELECT sender, recipient, count(*) FROM messages GROUP BY sender, recipient`,
			func(c []int64) error {
				u, v, k := c[0], c[1], c[2]
				if err := in(u, v); err != nil {
					return err
				}
				if u != v {
					g.add(int(u), int(v), k)
				}
				g.Sent[u] += k
				return nil
			})
		if err != nil {
			return err
		}
	case proto.Broadcast:
		err := eachInts(ctx, db, `SELECT sender, count(*) FROM broadcasts GROUP BY sender`, func(c []int64) error {
			u, k := c[0], c[1]
			if err := in(u); err != nil {
				return err
			}
			for v := range g.N {
				if v != int(u) {
					g.add(int(u), v, k)
				}
			}
			g.Sent[u] += k
			return nil
		})
		if err != nil {
			return err
		}
	case proto.SFS:
		// A hit's result names the entry's last writer (metadata.modified_by).
		err := eachInts(ctx, db, `SELECT agent, json_extract(result, '$.metadata.modified_by') AS w, count(*) FROM calls
			WHERE tool = 'read_file' AND error IS NULL AND json_valid(result) AND json_extract(result, '$.success') = 1
			AND json_type(result, '$.metadata.modified_by') = 'integer' GROUP BY agent, w`,
			func(c []int64) error {
				v, u, k := c[0], c[1], c[2]
				if err := in(u, v); err != nil {
					return err
				}
				if u != v {
					g.add(int(u), int(v), k)
				}
				return nil
			})
		if err != nil {
			return err
		}
		err = eachInts(ctx, db, `SELECT agent, count(*) FROM file_ops WHERE op = 'write' AND applied = 1 GROUP BY agent`,
			func(c []int64) error {
				u, k := c[0], c[1]
				if err := in(u); err != nil {
					return err
				}
				g.Sent[u] += k
				return nil
			})
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown protocol %q", p)
	}
	return eachInts(ctx, db, `SELECT agent, sum(received) FROM tallies GROUP BY agent`, func(c []int64) error {
		a, k := c[0], c[1]
		if err := in(a); err != nil {
			return err
		}
		g.Received[a] += k
		return nil
	})
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
