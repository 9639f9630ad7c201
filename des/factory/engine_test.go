package factory

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// traceText takes e's records (all of its episode so far, when no one
// took them before) and returns them as trace.jsonl lines.
func traceText(e *Engine) []byte {
	var b []byte
	for _, r := range e.Records() {
		b = r.AppendJSON(b, e.P)
		b = append(b, '\n')
	}
	return b
}

func tinyPlant(t testing.TB) *Plant {
	t.Helper()
	in, err := LoadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return Compile(in)
}

// script drives an engine with a fixed decision script: each step is
// "release J", "defer" or "assign J CELL"; the engine must be waiting for a
// decision before each step.
func script(t *testing.T, e *Engine, steps ...string) {
	t.Helper()
	for _, s := range steps {
		scriptStep(t, e, s)
	}
	if e.Advance() {
		t.Fatalf("episode still waiting for decisions at t=%g after the script", e.Now())
	}
}

// scriptStep commits one step of a script.
func scriptStep(t *testing.T, e *Engine, s string) {
	t.Helper()
	if !e.Advance() {
		t.Fatalf("episode ended (%s) before step %q", e.Status(), s)
	}
	var j int
	var cell string
	var err error
	switch {
	case s == "defer":
		err = e.Defer()
	case strings.HasPrefix(s, "release"):
		fmt.Sscanf(s, "release %d", &j)
		err = e.Release(j)
	case strings.HasPrefix(s, "assign"):
		fmt.Sscanf(s, "assign %d %s", &j, &cell)
		c := -1
		for i := range e.P.Cells {
			if e.P.Cells[i].ID == cell {
				c = i
			}
		}
		err = e.Assign(j, c)
	default:
		t.Fatalf("bad step %q", s)
	}
	if err != nil {
		t.Fatalf("step %q at t=%g: %v", s, e.Now(), err)
	}
}

// TestScriptedEpisode checks a whole tiny episode against testdata/tiny.golden.
// Run it with UPDATE_GOLDEN=1 in the environment to rewrite the file after
// an intended change, and read the diff: every line is an event the design
// notes name.
func TestScriptedEpisode(t *testing.T) {
	p := tinyPlant(t)
	e := NewEngine(p, 1)
	script(t, e,
		"release 0",   // t=0: job 0 arrives and is released
		"assign 0 C1", // its cut goes to C1: a slot is reserved, it moves from the dock
		"release 1",   // t=1: job 1 arrives and is released at once
		"assign 1 C1", // C1's one slot is taken by job 0 (moving in): blocked at the dock;
		// t=2: job 0 arrives and starts its setup, its slot frees: job 1 is admitted
		"assign 0 C2", // t=14: job 0's cut is done; its drill goes to C2 (it leaves C1)
		"assign 1 C1", // t=24: job 1's cut is done; drill on C1: it stays on its machine
	)
	if e.Status() != Done {
		t.Fatalf("status %s", e.Status())
	}
	golden := "testdata/tiny.golden"
	trace := traceText(e)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		os.WriteFile(golden, trace, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(trace, want) {
		t.Errorf("trace differs from %s (UPDATE_GOLDEN=1 rewrites it):\n%s", golden, trace)
	}
}

func TestIllegalCommitsAreErrors(t *testing.T) {
	p := tinyPlant(t)
	e := NewEngine(p, 1)
	if !e.Advance() {
		t.Fatal("no decision at t=0")
	}
	if err := e.Release(1); err == nil {
		t.Error("released job 1 before it arrived")
	}
	if err := e.Assign(0, 0); err == nil {
		t.Error("assigned job 0 before its release")
	}
	if err := e.Release(0); err != nil {
		t.Fatal(err)
	}
	if err := e.Assign(0, 1); err == nil || !strings.Contains(err.Error(), "cannot do it") {
		t.Errorf("cut on C2 (incapable) accepted: %v", err)
	}
	if err := e.Assign(0, 7); err == nil {
		t.Error("assign to a cell that does not exist accepted")
	}
	if err := e.Defer(); err == nil {
		t.Error("defer accepted with an empty backlog")
	}
	if err := e.Assign(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.Assign(0, 0); err == nil {
		t.Error("the same work item was routed twice")
	}
}

func TestTimeLimit(t *testing.T) {
	in, err := LoadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in.Horizon = 10
	e := NewEngine(Compile(in), 1)
	for e.Advance() {
		switch {
		case len(e.RouteQueue()) > 0:
			e.Assign(e.RouteQueue()[0], 0)
		case e.ReleasePending():
			e.Release(e.Backlog()[0])
		}
	}
	if e.Status() != TimeLimit || e.Now() != 10 || !e.Status().Truncated() {
		t.Fatalf("status %s at t=%g, want time_limit at 10", e.Status(), e.Now())
	}
	d := e.Debt()
	if d.Jobs != 2 || d.Ops != 4 {
		t.Errorf("debt %+v, want 2 jobs and 4 operations left", d)
	}
}

// An always-deferring plant never releases; with nothing else pending, the
// engine must not spin: defer is illegal once no event is pending, and the
// episode ends.
func TestDeferCannotFreezeTheClock(t *testing.T) {
	p := tinyPlant(t)
	e := NewEngine(p, 1)
	steps := 0
	for e.Advance() && steps < 100 {
		steps++
		if e.CanDefer() {
			e.Defer()
			continue
		}
		if len(e.RouteQueue()) > 0 {
			e.Assign(e.RouteQueue()[0], 0)
		} else {
			e.Release(e.Backlog()[0])
		}
	}
	if steps >= 100 {
		t.Fatal("decision loop did not end")
	}
	if e.Status() != Done {
		t.Fatalf("status %s: forced releases should finish both jobs", e.Status())
	}
}

// TestRecordIsTheLiteral checks that record resets every field of the
// batch slot it reuses (it assigns them one by one, for speed): each
// field of the slot is first set to a value no event writes, through
// reflection, so that a field added to Record and not reset by record
// fails here.
func TestRecordIsTheLiteral(t *testing.T) {
	p := tinyPlant(t)
	e := NewEngine(p, 1) // episode_start and power_change: the batch has storage
	e.now = 12.5
	for _, j := range []int{-1, 0, 1} {
		e.Records() // the next record reuses the first slot
		if cap(e.recs) == 0 {
			t.Fatal("the batch has no storage to reuse")
		}
		rv := reflect.ValueOf(&e.recs[:1][0]).Elem()
		for i := range rv.NumField() {
			f := rv.Field(i)
			switch f.Kind() {
			case reflect.Float64:
				f.SetFloat(-7.25)
			case reflect.String:
				f.SetString("junk")
			case reflect.Int32, reflect.Int64, reflect.Int:
				f.SetInt(99)
			case reflect.Uint8, reflect.Uint64:
				f.SetUint(99)
			default:
				t.Fatalf("Record.%s: kind %s not covered by this test", rv.Type().Field(i).Name, f.Kind())
			}
		}
		want := Record{T: e.now, Ev: EvFinish, Job: int32(j), Op: -1, Cell: -1, Machine: -1, From: -1}
		if j >= 0 {
			want.Op = int32(e.jobs[j].op)
		}
		if got := *e.record(EvFinish, j); got != want {
			t.Fatalf("job %d: record gives %+v, want %+v", j, got, want)
		}
	}
}
