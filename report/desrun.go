package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/inputfile"
)

// One scheduling run directory (des run --out, or a suite's
// cases/<case_id>/) read for its per-case figures: the machines' states
// and the transports over time from trace.jsonl, the plant power against
// its cap, the decisions by source over time from decisions.jsonl, and
// the message counts by type from metrics.json. The JSONL files are
// streamed line by line with a bounded line length, so a long trace costs
// time, not memory; the drawn spans and the transports kept are capped
// (maxSpans, maxTransports).

// Run directory files (docs/trace-format.md).
const (
	fileTrace     = "trace.jsonl"
	fileDecisions = "decisions.jsonl"
	fileMetrics   = "metrics.json"
	fileManifest  = "manifest.json"
	fileInstance  = "instance.json"
)

// Bounds on what one run directory contributes to the page.
const (
	maxTraceLine    = 1 << 20  // one trace.jsonl record
	maxDecisionLine = 64 << 20 // one decisions.jsonl record (payload and raw reply included)
	maxSpans        = 20000    // Gantt spans drawn per case
	maxTransports   = 10000    // transport_start records kept (held until the trace is read) and drawn per case
	maxPowerPoints  = 20000    // power_change records drawn per case
	maxGanttRows    = 400      // Gantt rows (machines, then transports) per case
	auditBins       = 200      // time bins of the decision-source audit
)

// Machine states drawn in the Gantt chart, in legend order.
var ganttKinds = []string{"setup", "processing", "blocked", "down", "transport in flight"}

const (
	kSetup = iota
	kBusy
	kBlocked
	kDown
	kTransport
	kIdle = -1
)

// desRun is what the per-case figures need from one run directory.
type desRun struct {
	dir              string
	instance, status string
	seed             string
	end, cap         float64
	timeUnitS        float64  // seconds per time unit (episode_start), 0 if not given
	rows             []string // Gantt rows: machines, then transports by destination
	spans            []Span
	spansLeft        int // spans not drawn (over maxSpans)
	rowsLeft         int // rows not drawn (over maxGanttRows)
	transportsLeft   int // transports not kept (over maxTransports)
	powerT, powerKW  []float64
	powerLeft        int
	sources          []string    // decision sources, sorted
	audit            [][]float64 // per source, cumulative decisions at the end of each bin
	decisions        int
	msgTypes         []string
	msgCounts        []float64
	metrics          map[string]json.RawMessage
}

// machineState is the replayed state of one machine.
type machineState struct {
	row    int // index in order of appearance
	since  float64
	cur    int    // kSetup … kDown, or kIdle
	before int    // the state a breakdown interrupted
	job    string // the job on the machine ("" for none): the span's hover label
}

// traceRec is the part of a trace.jsonl record the figures use.
type traceRec struct {
	T           *float64 `json:"t"`
	Ev          string   `json:"ev"`
	Cell        string   `json:"cell"`
	Machine     *int     `json:"machine"`
	From        string   `json:"from"`
	FromMachine *int     `json:"from_machine"`
	Dur         float64  `json:"dur"`
	KW          float64  `json:"kw"`
	Cap         float64  `json:"power_cap_kw"`
	Instance    string   `json:"instance"`
	Seed        *uint64  `json:"seed"`
	Status      string   `json:"status"`
	Job         *int64   `json:"job"`
	Op          *int64   `json:"op"`
	TimeUnitS   float64  `json:"time_unit_s"`
}

// jobLabel names the job (and operation) of a record for a span's hover
// text, "" when the record names none.
func (ev *traceRec) jobLabel() string {
	if ev.Job == nil {
		return ""
	}
	s := "job " + strconv.FormatInt(*ev.Job, 10)
	if ev.Op != nil {
		s += ", op " + strconv.FormatInt(*ev.Op, 10)
	}
	return s
}

// scanLines calls fn with each non-empty line of the file at path, each
// at most maxLine bytes; errors name the file and line.
func scanLines(path string, maxLine int, fn func(line []byte, no int) error) error {
	f, err := inputfile.Open(path, "run log") // a FIFO is refused, not waited on
	if err != nil {
		return err
	}
	defer f.Close()
	return inputfile.Lines(f, path, "run log", maxLine, func(no int, line []byte) error {
		if len(line) == 0 {
			return nil
		}
		return fn(line, no)
	})
}

// readDESRun reads the run directory dir.
func readDESRun(dir string) (*desRun, error) {
	r := &desRun{dir: dir}
	machines, err := instanceMachines(filepath.Join(dir, fileInstance))
	if err != nil {
		return nil, err
	}
	if err := r.readTrace(filepath.Join(dir, fileTrace), machines); err != nil {
		return nil, err
	}
	if err := r.readDecisions(filepath.Join(dir, fileDecisions)); err != nil {
		return nil, err
	}
	if err := r.readMetrics(filepath.Join(dir, fileMetrics)); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *desRun) readTrace(path string, known []cellMachines) error {
	machines := map[string]*machineState{}
	transportRow := map[string]int{}
	var machineKeys []string
	type transport struct {
		cell       string
		start, end float64
		job        string
	}
	var transports []transport
	addSpan := func(row int, a, b float64, kind int, label string) {
		if b <= a {
			return
		}
		if len(r.spans) >= maxSpans {
			r.spansLeft++
			return
		}
		r.spans = append(r.spans, Span{Row: row, Start: a, End: b, Kind: kind, Label: label})
	}
	get := func(cell string, m int) *machineState {
		k := cell + "\x00" + strconv.Itoa(m)
		s, ok := machines[k]
		if !ok {
			s = &machineState{row: len(machineKeys), cur: kIdle, before: kIdle}
			machines[k] = s
			machineKeys = append(machineKeys, k)
		}
		return s
	}
	for _, c := range known { // every machine of the instance gets a row, idle or not
		for m := range c.Machines {
			get(c.ID, m)
		}
	}
	// The machines of the instance whose rows fall beyond maxGanttRows
	// draw nothing, so that their spans do not use up maxSpans before
	// the rows shown are complete.
	hidden := map[int]bool{}
	for rank, i := range machineOrder(machineKeys) {
		if rank >= maxGanttRows {
			hidden[i] = true
		}
	}
	addMachineSpan := func(row int, a, b float64, kind int, label string) {
		if !hidden[row] {
			addSpan(row, a, b, kind, label)
		}
	}
	var last float64
	started, ended := false, false
	err := scanLines(path, maxTraceLine, func(line []byte, no int) error {
		var ev traceRec
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("%s:%d: not a trace record: %v", path, no, err)
		}
		if ev.T == nil || math.IsNaN(*ev.T) || math.IsInf(*ev.T, 0) {
			return fmt.Errorf("%s:%d: record without a finite time t", path, no)
		}
		t := *ev.T
		if t < last {
			return fmt.Errorf("%s:%d: time %v goes back (previous record at %v)", path, no, t, last)
		}
		last = t
		switch ev.Ev {
		case "episode_start":
			started = true
			r.instance, r.cap, r.timeUnitS = ev.Instance, ev.Cap, ev.TimeUnitS
			if ev.Seed != nil {
				r.seed = strconv.FormatUint(*ev.Seed, 10)
			}
		case "power_change":
			if len(r.powerT) >= maxPowerPoints {
				r.powerLeft++
				break
			}
			r.powerT, r.powerKW = append(r.powerT, t), append(r.powerKW, ev.KW)
		case "setup_start", "process_start", "finish", "job_complete", "breakdown", "repair":
			if ev.Machine == nil {
				return fmt.Errorf("%s:%d: %s without a machine", path, no, ev.Ev)
			}
			s := get(ev.Cell, *ev.Machine)
			switch ev.Ev {
			case "setup_start":
				s.move(t, kSetup, addMachineSpan)
				s.job = ev.jobLabel()
			case "process_start":
				s.move(t, kBusy, addMachineSpan)
				s.job = ev.jobLabel()
			case "finish":
				s.move(t, kBlocked, addMachineSpan)
			case "job_complete":
				s.move(t, kIdle, addMachineSpan)
				s.job = ""
			case "breakdown":
				s.before = s.cur
				s.move(t, kDown, addMachineSpan)
			case "repair":
				s.move(t, s.before, addMachineSpan)
			}
		case "transport_start":
			if ev.FromMachine != nil {
				s := get(ev.From, *ev.FromMachine)
				if s.cur == kDown {
					s.before = kIdle // the job left a broken machine: idle after its repair
				} else {
					s.move(t, kIdle, addMachineSpan)
				}
				s.job = ""
			}
			if _, ok := transportRow[ev.Cell]; !ok {
				transportRow[ev.Cell] = 0
			}
			if len(transports) >= maxTransports {
				r.transportsLeft++
				break
			}
			transports = append(transports, transport{ev.Cell, t, t + ev.Dur, ev.jobLabel()})
		case "episode_end":
			ended = true
			r.status = ev.Status
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no trace (is %s a des run directory?): %w", path, filepath.Dir(path), fs.ErrNotExist)
		}
		return err
	}
	if !started {
		return fmt.Errorf("%s: no episode_start record", path)
	}
	r.end = last
	if !ended {
		r.status = "unfinished trace"
	}
	// Rows: machines by cell id then index, then transports by destination.
	rowOf := map[string]int{}
	for row, i := range machineOrder(machineKeys) {
		k := machineKeys[i]
		rowOf[k] = row
		cell, m, _ := strings.Cut(k, "\x00")
		r.rows = append(r.rows, cell+" m"+m)
	}
	cells := make([]string, 0, len(transportRow))
	for c := range transportRow {
		cells = append(cells, c)
	}
	slices.Sort(cells)
	for _, c := range cells {
		transportRow[c] = len(r.rows)
		r.rows = append(r.rows, "→ "+c)
	}
	// Close the states still open at the end, then number the rows.
	for _, k := range machineKeys {
		machines[k].move(r.end, kIdle, addMachineSpan)
	}
	// Spans were recorded with the machine's index in machineKeys.
	for i := range r.spans {
		r.spans[i].Row = rowOf[machineKeys[r.spans[i].Row]]
	}
	for _, tr := range transports {
		addSpan(transportRow[tr.cell], tr.start, math.Min(tr.end, math.Max(r.end, tr.start)), kTransport, tr.job)
	}
	if len(r.rows) > maxGanttRows {
		r.rowsLeft = len(r.rows) - maxGanttRows
		r.rows = r.rows[:maxGanttRows]
		r.spans = slices.DeleteFunc(r.spans, func(s Span) bool { return s.Row >= maxGanttRows })
	}
	return nil
}

// machineOrder returns the indices of keys (cell "\x00" machine index)
// in row order: by cell id, then by machine index.
func machineOrder(keys []string) []int {
	type mk struct {
		cell string
		m, i int
	}
	ms := make([]mk, len(keys))
	for i, k := range keys {
		cell, idx, _ := strings.Cut(k, "\x00")
		m, _ := strconv.Atoi(idx)
		ms[i] = mk{cell, m, i}
	}
	slices.SortFunc(ms, func(a, b mk) int {
		if c := strings.Compare(a.cell, b.cell); c != 0 {
			return c
		}
		return a.m - b.m
	})
	out := make([]int, len(ms))
	for r, m := range ms {
		out[r] = m.i
	}
	return out
}

// cellMachines is a cell of instance.json and its machine count.
type cellMachines struct {
	ID       string `json:"id"`
	Machines int    `json:"machines"`
}

// instanceMachines lists the cells of the run's instance.json, so that
// machines that never worked still get their (empty) Gantt row; none
// when the file is missing.
func instanceMachines(path string) ([]cellMachines, error) {
	b, err := inputfile.Read(path, "run instance", MaxFileBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var inst struct {
		Areas []struct {
			Cells []cellMachines `json:"cells"`
		} `json:"areas"`
	}
	if err := json.Unmarshal(b, &inst); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var out []cellMachines
	total := 0
	for _, a := range inst.Areas {
		for _, c := range a.Cells {
			if c.Machines < 0 || c.Machines > 1<<16 {
				return nil, fmt.Errorf("%s: cell %s: %d machines", path, c.ID, c.Machines)
			}
			if total += c.Machines; total > 1<<20 {
				return nil, fmt.Errorf("%s: more than %d machines", path, 1<<20)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// move closes the machine's current state at t (a span, unless idle) and
// enters kind. Spans carry the machine's index in order of appearance
// until readTrace numbers the rows.
func (s *machineState) move(t float64, kind int, add func(row int, a, b float64, kind int, label string)) {
	if s.cur != kIdle {
		add(s.row, s.since, t, s.cur, s.job)
	}
	s.cur, s.since = kind, t
}

// readDecisions bins the decisions of decisions.jsonl by source over
// [0, end]: audit[s][b] is the number of decisions of source s made by the
// end of bin b.
func (r *desRun) readDecisions(path string) error {
	type dec struct {
		Time   float64 `json:"time"`
		Source string  `json:"source"`
	}
	counts := map[string][]float64{}
	width := r.end / auditBins
	err := scanLines(path, maxDecisionLine, func(line []byte, no int) error {
		var d dec
		if err := json.Unmarshal(line, &d); err != nil {
			return fmt.Errorf("%s:%d: not a decision record: %v", path, no, err)
		}
		if d.Source == "" {
			return fmt.Errorf("%s:%d: decision without a source", path, no)
		}
		c, ok := counts[d.Source]
		if !ok {
			c = make([]float64, auditBins)
			counts[d.Source] = c
		}
		b := 0
		if width > 0 {
			b = min(max(int(d.Time/width), 0), auditBins-1)
		}
		c[b]++
		r.decisions++
		return nil
	})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // an older run without decisions: no audit figure
		}
		return err
	}
	for s := range counts {
		r.sources = append(r.sources, s)
	}
	slices.Sort(r.sources)
	for _, s := range r.sources {
		c := counts[s]
		for b := 1; b < len(c); b++ {
			c[b] += c[b-1]
		}
		r.audit = append(r.audit, c)
	}
	return nil
}

// readMetrics reads metrics.json: the metrics shown in the case's table
// and the message counts by type.
func (r *desRun) readMetrics(path string) error {
	b, err := inputfile.Read(path, "run metrics", MaxFileBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	var m struct {
		Secondary struct {
			MessagesByType map[string]float64 `json:"messages_by_type"`
		} `json:"secondary"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if err := json.Unmarshal(b, &r.metrics); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	for k := range m.Secondary.MessagesByType {
		r.msgTypes = append(r.msgTypes, k)
	}
	slices.Sort(r.msgTypes)
	for _, k := range r.msgTypes {
		r.msgCounts = append(r.msgCounts, m.Secondary.MessagesByType[k])
	}
	return nil
}
