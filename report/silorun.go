package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/transcript"
)

// One information-silo run directory (silo run --out, or a suite's
// runs/<case_id>/) read for its per-run page: the answers and scores from
// result.json, the communication graph round by round from calls.jsonl
// (streamed, bounded lines), and the transcript exactly as `coordbench
// silo show` prints it (package transcript), clipped to maxTranscript.

const (
	maxCallLine    = 64 << 20 // one calls.jsonl record (contents can be large)
	maxTranscript  = 256 << 10
	maxRoundsDrawn = 24 // round-by-round graphs per run
	maxGraphNodes  = 60 // agents drawn in one graph
)

// Edge kinds of the communication graph, in legend order.
var commKinds = []string{"message", "broadcast", "file write", "file read"}

const (
	eMessage = iota
	eBroadcast
	eWrite
	eRead
)

// siloRun is what the per-run section needs from one run directory.
type siloRun struct {
	dir        string
	res        *round.Result
	rounds     map[int]map[[3]int]int // round → (from, to, kind) → count
	total      map[[3]int]int
	transcript string
	clipped    int // transcript bytes left out
	callsErr   string
}

// readSiloRun reads the run directory dir.
func readSiloRun(dir string) (*siloRun, error) {
	path := filepath.Join(dir, transcript.FileResult)
	b, err := inputfile.Read(path, "run result", MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: a silo run directory needs its %s: %w", dir, transcript.FileResult, err)
	}
	r := &siloRun{dir: dir, res: &round.Result{}, rounds: map[int]map[[3]int]int{}, total: map[[3]int]int{}}
	if err := json.Unmarshal(b, r.res); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.res.N < 1 || r.res.N > 1<<20 {
		return nil, fmt.Errorf("%s: n = %d is not a team size", path, r.res.N)
	}
	if r.res.N+1 <= maxGraphNodes { // larger teams get no graph: do not count their edges
		if err := r.readCalls(filepath.Join(dir, transcript.FileCalls)); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			r.callsErr = "no " + transcript.FileCalls + " in this run directory: no communication graph"
		}
	}
	w := &capWriter{max: maxTranscript}
	if err := transcript.Write(w, dir, transcript.Options{Agent: transcript.AllAgents}); err != nil {
		r.transcript = "transcript: " + err.Error()
	} else {
		r.transcript = w.String()
		r.clipped = w.dropped
		if r.clipped > 0 {
			whole := trimPartialRune(r.transcript)
			r.clipped += len(r.transcript) - len(whole)
			r.transcript = whole
		}
	}
	return r, nil
}

// trimPartialRune drops the bytes of a UTF-8 sequence cut at the end of s
// (at most 3).
func trimPartialRune(s string) string {
	for i := 1; i <= 3 && i <= len(s); i++ {
		c := s[len(s)-i]
		if utf8.RuneStart(c) {
			if !utf8.FullRuneInString(s[len(s)-i:]) {
				return s[:len(s)-i]
			}
			return s
		}
	}
	return s
}

// capWriter keeps the first max bytes written to it and counts the rest,
// so that a long transcript costs no more memory than it shows.
type capWriter struct {
	bytes.Buffer
	max     int
	dropped int
}

func (w *capWriter) Write(p []byte) (int, error) {
	keep := min(len(p), max(w.max-w.Len(), 0))
	w.Buffer.Write(p[:keep])
	w.dropped += len(p) - keep
	return len(p), nil
}

// files is the node index of the shared file system in the graphs.
func (r *siloRun) files() int { return r.res.N }

// readCalls counts who sent to whom and who wrote or read files, per round.
func (r *siloRun) readCalls(path string) error {
	type call struct {
		Round  int             `json:"round"`
		Agent  int             `json:"agent"`
		Tool   string          `json:"tool"`
		Args   json.RawMessage `json:"args"`
		Error  string          `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	n := r.res.N
	return scanLines(path, maxCallLine, func(line []byte, no int) error {
		var c call
		if err := json.Unmarshal(line, &c); err != nil {
			return fmt.Errorf("%s:%d: not a call record: %v", path, no, err)
		}
		if c.Error != "" || c.Agent < 0 || c.Agent >= n || c.Round < 0 {
			return nil // a refused call moved nothing
		}
		add := func(from, to, kind int) {
			k := [3]int{from, to, kind}
			if r.rounds[c.Round] == nil {
				r.rounds[c.Round] = map[[3]int]int{}
			}
			r.rounds[c.Round][k]++
			r.total[k]++
		}
		switch c.Tool {
		case "send_message":
			var a struct {
				Target json.Number `json:"target_id"`
			}
			if json.Unmarshal(c.Args, &a) == nil {
				if t, err := strconv.Atoi(a.Target.String()); err == nil && t >= 0 && t < n {
					add(c.Agent, t, eMessage)
				}
			}
		case "broadcast_message":
			for t := range n {
				if t != c.Agent {
					add(c.Agent, t, eBroadcast)
				}
			}
		case "write_file":
			add(c.Agent, r.files(), eWrite)
		case "read_file":
			add(r.files(), c.Agent, eRead)
		}
		return nil
	})
}

// graph draws the edges of one round (or all rounds for rnd 0).
func (r *siloRun) graph(id string, rnd int) Figure {
	edges := r.total
	title := "All rounds"
	if rnd > 0 {
		edges, title = r.rounds[rnd], "Round "+strconv.Itoa(rnd)
	}
	nodes := make([]string, r.res.N)
	for i := range nodes {
		nodes[i] = strconv.Itoa(i)
	}
	if r.res.Protocol == "sfs" || slices.ContainsFunc(mapKeys(r.total), func(k [3]int) bool { return k[2] >= eWrite }) {
		nodes = append(nodes, "files")
	}
	keys := mapKeys(edges)
	slices.SortFunc(keys, func(a, b [3]int) int {
		for i := range a {
			if a[i] != b[i] {
				return a[i] - b[i]
			}
		}
		return 0
	})
	var es []Edge
	for _, k := range keys {
		es = append(es, Edge{From: k[0], To: k[1], Kind: k[2], Count: edges[k]})
	}
	size := min(max(260, 14*len(nodes)), 640)
	return Graph{Title: title, Nodes: nodes, Kinds: commKinds, Edges: es, Size: size}.Figure(id, "")
}

// roundList is the rounds with any communication, in order.
func (r *siloRun) roundList() []int {
	rs := make([]int, 0, len(r.rounds))
	for k := range r.rounds {
		rs = append(rs, k)
	}
	slices.Sort(rs)
	return rs
}

func mapKeys[K comparable, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// answersTable is each agent's answer and score from result.json.
func (r *siloRun) answersTable() Table {
	t := Table{Title: "Answers and scores", Head: []string{"agent", "submitted", "round", "answer", "correct", "partial", "failure labels", "error"}, Left: []int{3, 6, 7}}
	for _, a := range r.res.Agents {
		ans := "–"
		if a.Submitted && len(a.Answer) > 0 {
			ans = clipText(string(a.Answer), 200)
		}
		labels := "–"
		if len(a.Labels) > 0 {
			labels = fmt.Sprint(a.Labels)
		}
		t.Rows = append(t.Rows, []Cell{{Text: strconv.Itoa(a.ID)}, {Text: strconv.FormatBool(a.Submitted)}, {Text: strconv.Itoa(a.Round)},
			{Text: ans}, {Text: strconv.FormatBool(a.Correct)}, {Text: fnum(a.Partial, 3)}, {Text: labels}, {Text: clipText(a.Error, 200)}})
	}
	return t
}

func (r *siloRun) summary() string {
	return fmt.Sprintf("task %s, N = %d, protocol %s, mode %s, seed %d, %d rounds: S = %s, success = %t, P = %s, D = %s",
		r.res.Task, r.res.N, r.res.Protocol, r.res.Mode, r.res.Seed, r.res.Rounds, fnum(r.res.S, 3), r.res.Success, fnum(r.res.P, 3), fnum(r.res.D, 3))
}

// clipText cuts s to at most n runes, with an ellipsis.
func clipText(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n]) + "…"
}
