package coord

import (
	"bufio"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/factory"
)

// TestProtocolScripts runs the readable protocol scripts of testdata/*.txt:
// each states which agents a paradigm activates, with which decision kind
// and options, what they answer, and which protocol messages follow.
//
//	paradigm ID                   the authority mode to run
//	expect AGENT KIND LABEL...    AGENT is active for KIND with exactly these options
//	do AGENT=LABEL ...            the answers of every active agent; commits the step
//	                              (LABEL #N answers index N as it is, legal or not)
//	fallback AGENT REASON...      AGENT's answer of the last step was replaced by the
//	                              contract-safe fallback, with exactly this reason
//	messages ... end              the messages sent since the last check:
//	                              "TYPE SENDER RECEIVER [forced]" per line
//	done                          the episode ends with every job complete
//
// Option labels: release:JOB, defer, allocate:AREA, assign:CELL, bid:CLASS,
// decline, accept, reject, escalate.
func TestProtocolScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) < 4 {
		t.Fatalf("want a script per paradigm, found %v", files)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

func label(o Option) string {
	if t := o.Target(); t != "" {
		return o.Action + ":" + t
	}
	return o.Action
}

func runScript(t *testing.T, path string) {
	in, err := factory.LoadFile("testdata/two_areas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng := factory.NewEngine(factory.Compile(in), 1)
	var interp *Interpreter
	var d *Decision
	seen := 0          // messages already checked
	var audits []Audit // the last step's
	current := func(line int) *Decision {
		if d == nil {
			if !eng.Advance() {
				t.Fatalf("line %d: the episode ended (%s) but the script expects a decision", line, eng.Status())
			}
			d = interp.Next()
		}
		return d
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "paradigm":
			m, err := new(Paradigms).Lookup(fields[1])
			if err != nil {
				t.Fatal(err)
			}
			if interp, err = NewInterpreter(eng, m); err != nil {
				t.Fatal(err)
			}
		case "expect":
			dec := current(n)
			v := dec.ActiveAgents[fields[1]]
			if v == nil {
				t.Fatalf("line %d: %s is not active; active: %v", n, fields[1], slices.Sorted(maps.Keys(dec.ActiveAgents)))
			}
			var got []string
			for _, o := range v.Options {
				got = append(got, label(o))
			}
			if v.Kind != fields[2] || !slices.Equal(got, fields[3:]) {
				t.Fatalf("line %d: %s: got %s %v, want %s %v", n, fields[1], v.Kind, got, fields[2], fields[3:])
			}
		case "do":
			dec := current(n)
			actions := map[string]int{}
			for _, kv := range fields[1:] {
				agent, lab, _ := strings.Cut(kv, "=")
				v := dec.ActiveAgents[agent]
				if v == nil {
					t.Fatalf("line %d: %s is not active", n, agent)
				}
				idx := slices.IndexFunc(v.Options, func(o Option) bool { return label(o) == lab })
				if raw, ok := strings.CutPrefix(lab, "#"); ok {
					if idx, err = strconv.Atoi(raw); err != nil {
						t.Fatalf("line %d: %s: bad index %q", n, agent, raw)
					}
				} else if idx < 0 {
					t.Fatalf("line %d: %s has no option %s", n, agent, lab)
				}
				actions[agent] = idx
			}
			if len(actions) != len(dec.ActiveAgents) {
				t.Fatalf("line %d: answers for %d agents, %d are active", n, len(actions), len(dec.ActiveAgents))
			}
			if audits, err = interp.Apply(dec, actions, SourceBuiltin, nil); err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			for _, a := range audits {
				if a.Source != SourceBuiltin && a.Requested == nil {
					t.Fatalf("line %d: %s fell back: %s", n, a.AgentID, a.Reason)
				}
			}
			d = nil
		case "fallback":
			want := strings.Join(fields[2:], " ")
			i := slices.IndexFunc(audits, func(a Audit) bool { return a.AgentID == fields[1] })
			if i < 0 || audits[i].Source != SourceFallback || audits[i].Reason != want {
				t.Fatalf("line %d: %s: want a fallback with reason %q, audits %+v", n, fields[1], want, audits)
			}
		case "messages":
			var want []string
			for sc.Scan() {
				n++
				l := strings.TrimSpace(sc.Text())
				if l == "end" {
					break
				}
				want = append(want, l)
			}
			var got []string
			for _, m := range interp.Messages[seen:] {
				s := m.Type + " " + m.Sender + " " + m.Receiver
				if m.Forced {
					s += " forced"
				}
				got = append(got, s)
			}
			seen = len(interp.Messages)
			if !slices.Equal(got, want) {
				t.Fatalf("line %d: messages\n got: %q\nwant: %q", n, got, want)
			}
		case "done":
			for eng.Advance() {
				t.Fatalf("line %d: decisions still pending at t=%g", n, eng.Now())
			}
			if eng.Status() != factory.Done {
				t.Fatalf("line %d: status %s", n, eng.Status())
			}
		default:
			t.Fatalf("line %d: unknown command %q", n, fields[0])
		}
	}
}
