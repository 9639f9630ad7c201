package check

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Mutation tests: corrupt a valid run in one targeted way and require the
// matching check to fire. A checker that never fails proves nothing.

type line = map[string]any

// runFiles is a run directory held in memory for editing.
type runFiles struct {
	trace     []line
	decisions [][]byte
	messages  [][]byte
	metrics   map[string]any
	instance  map[string]any
	manifest  map[string]any
	rehash    bool // recompute manifest hashes on write
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func loadRun(t *testing.T, dir string) *runFiles {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	f := &runFiles{rehash: true}
	for _, l := range splitLines(read(fileTrace)) {
		f.trace = append(f.trace, decode(t, l))
	}
	f.decisions = splitLines(read(fileDecisions))
	f.messages = splitLines(read(fileMessages))
	f.metrics = decode(t, read(fileMetrics))
	f.instance = decode(t, read(fileInstance))
	f.manifest = decode(t, read(fileManifest))
	return f
}

func (f *runFiles) write(t *testing.T, dir string) {
	t.Helper()
	enc := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	files := map[string][]byte{}
	var tr bytes.Buffer
	for _, l := range f.trace {
		tr.Write(enc(l))
		tr.WriteByte('\n')
	}
	files[fileTrace] = tr.Bytes()
	join := func(ls [][]byte) []byte {
		var b bytes.Buffer
		for _, l := range ls {
			b.Write(l)
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	files[fileDecisions] = join(f.decisions)
	files[fileMessages] = join(f.messages)
	files[fileMetrics] = enc(f.metrics)
	files[fileInstance] = enc(f.instance)
	if f.rehash {
		sums := f.manifest["files_sha256"].(map[string]any)
		for name, b := range files {
			s := sha256.Sum256(b)
			sums[name] = hex.EncodeToString(s[:])
		}
		f.manifest["instance_sha256"] = sums[fileInstance]
	}
	files[fileManifest] = enc(f.manifest)
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Accessors on decoded trace lines.

func ev(l line) string { s, _ := l["ev"].(string); return s }

func has(l line, k string) bool { _, ok := l[k]; return ok }

func num(l line, k string) float64 {
	n, ok := l[k].(json.Number)
	if !ok {
		return -1
	}
	f, _ := strconv.ParseFloat(string(n), 64)
	return f
}

func inum(l line, k string) int {
	if !has(l, k) {
		return -1
	}
	return int(num(l, k))
}

func setNum(l line, k string, v float64) { l[k] = json.Number(strconv.FormatFloat(v, 'g', -1, 64)) }

func str(l line, k string) string { s, _ := l[k].(string); return s }

func clone(l line) line {
	c := line{}
	for k, v := range l {
		c[k] = v
	}
	return c
}

func (f *runFiles) remove(i int) line {
	l := f.trace[i]
	f.trace = append(f.trace[:i], f.trace[i+1:]...)
	return l
}

func (f *runFiles) insert(i int, l line) {
	f.trace = append(f.trace[:i], append([]line{l}, f.trace[i:]...)...)
}

// find returns the index of the first line at or after from matching ok,
// or -1.
func (f *runFiles) find(from int, ok func(l line) bool) int {
	for i := from; i < len(f.trace); i++ {
		if ok(f.trace[i]) {
			return i
		}
	}
	return -1
}

func sameMachine(a, b line) bool {
	return str(a, "cell") == str(b, "cell") && inum(a, "machine") == inum(b, "machine") && has(a, "machine") && has(b, "machine")
}

// cells returns instance.json's cells (maps), in order.
func (f *runFiles) cells() []map[string]any {
	var out []map[string]any
	for _, a := range f.instance["areas"].([]any) {
		for _, c := range a.(map[string]any)["cells"].([]any) {
			out = append(out, c.(map[string]any))
		}
	}
	return out
}

// opType is the operation type of job j's op k, from its arrival record.
func (f *runFiles) opType(j, k int) string {
	i := f.find(0, func(l line) bool { return ev(l) == "arrival" && inum(l, "job") == j })
	prod := str(f.trace[i], "product")
	for _, p := range f.instance["products"].([]any) {
		pm := p.(map[string]any)
		if pm["id"] == prod {
			return pm["route"].([]any)[k].(map[string]any)["op"].(string)
		}
	}
	return ""
}

var (
	baseOnce sync.Once
	baseDir  string
)

// base is a valid run with blocking, setups, interrupted work and
// repairs: A5C12-1, greedy controller, seed 3.
func base(t *testing.T) string {
	baseOnce.Do(func() {
		dir, err := os.MkdirTemp("", "checkbase")
		if err != nil {
			t.Fatal(err)
		}
		baseDir = dir
		runDir(t, "A5C12-1", "greedy", 3, dir)
	})
	return baseDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if baseDir != "" {
		os.RemoveAll(baseDir)
	}
	os.Exit(code)
}

type mutation struct {
	name   string
	want   string // check id that must fire; "" = the run must stay OK
	msg    string // substring the problem's message must contain
	mutate func(t *testing.T, f *runFiles)
}

var mutations = []mutation{
	{name: "identity round trip", mutate: func(t *testing.T, f *runFiles) {}},
	{name: "process_start moved into another job's processing interval", want: ckOverlap, mutate: func(t *testing.T, f *runFiles) {
		for pa := range f.trace {
			a := f.trace[pa]
			if ev(a) != "process_start" {
				continue
			}
			fa := f.find(pa+1, func(l line) bool { return ev(l) == "finish" && sameMachine(l, a) })
			if fa < 0 || num(f.trace[fa], "t") <= num(a, "t") {
				continue
			}
			k := f.find(fa+1, func(l line) bool {
				return (ev(l) == "setup_start" || ev(l) == "process_start") && sameMachine(l, a) && inum(l, "job") != inum(a, "job")
			})
			if k < 0 {
				continue
			}
			b := f.remove(k)
			setNum(b, "t", num(a, "t"))
			f.insert(pa+1, b)
			return
		}
		t.Fatal("no machine processes two jobs in a row")
	}},
	{name: "op order swapped", want: ckOpOrder, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(0, func(l line) bool { return ev(l) == "arrival" && inum(l, "ops") >= 3 })
		j := inum(f.trace[i], "job")
		for _, l := range f.trace {
			if inum(l, "job") == j && has(l, "op") {
				switch inum(l, "op") {
				case 1:
					setNum(l, "op", 2)
				case 2:
					setNum(l, "op", 1)
				}
			}
		}
	}},
	{name: "op routed to an incapable cell", want: ckCapability, mutate: func(t *testing.T, f *runFiles) {
		for i, r := range f.trace {
			if ev(r) != "route_assigned" || ev(f.trace[i+1]) != "admission" {
				continue
			}
			j, k, from := inum(r, "job"), inum(r, "op"), str(r, "cell")
			typ := f.opType(j, k)
			for _, c := range f.cells() {
				caps, _ := c["capabilities"].(map[string]any)
				if _, ok := caps[typ]; ok || num(c, "machines") < 2 {
					continue
				}
				to := c["id"].(string)
				for _, l := range f.trace {
					if inum(l, "job") != j {
						continue
					}
					if inum(l, "op") == k && has(l, "cell") {
						l["cell"] = to
					}
					if ev(l) == "transport_start" && inum(l, "op") == k+1 && str(l, "from") == from {
						l["from"] = to
					}
				}
				return
			}
		}
		t.Fatal("no candidate")
	}},
	{name: "power_change level altered", want: ckPowerLevel, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(10, func(l line) bool { return ev(l) == "power_change" })
		setNum(f.trace[i], "kw", num(f.trace[i], "kw")+1)
	}},
	{name: "blocking_release deleted", want: ckBlocking, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(0, func(l line) bool { return ev(l) == "blocking_release" })
		if i < 0 {
			t.Fatal("no blocking in the base run")
		}
		f.remove(i)
	}},
	{name: "metrics.json G_td altered", want: ckMetrics, msg: "G_td", mutate: func(t *testing.T, f *runFiles) {
		setNumMap(f.metrics, "G_td", numMap(f.metrics, "G_td")*1.001+1)
	}},
	{name: "process_start between a breakdown and its repair", want: ckDown, mutate: func(t *testing.T, f *runFiles) {
		for b, l := range f.trace {
			if ev(l) != "breakdown" {
				continue
			}
			p := f.find(0, func(x line) bool { return ev(x) == "process_start" && sameMachine(x, l) })
			if p < 0 {
				continue
			}
			ps := clone(f.trace[p])
			setNum(ps, "t", num(l, "t"))
			f.insert(b+1, ps)
			return
		}
		t.Fatal("no breakdown of a machine that processes")
	}},
	{name: "buffer overfilled (capacity lowered)", want: ckBuffer, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(0, func(l line) bool { return ev(l) == "blocked" })
		cell := str(f.trace[i], "cell")
		for _, c := range f.cells() {
			if c["id"] == cell {
				setNumMap(c, "buffer", numMap(c, "buffer")-1)
			}
		}
	}},
	{name: "blocked job admitted into its full cell at once", want: ckBuffer, mutate: func(t *testing.T, f *runFiles) {
		// The first blocked job whose release is an admission (not a
		// re-route).
		for b := f.find(0, func(l line) bool { return ev(l) == "blocked" }); ; b = f.find(b+1, func(l line) bool { return ev(l) == "blocked" }) {
			if b < 0 {
				t.Fatal("no blocked job released by an admission")
			}
			j, t0 := inum(f.trace[b], "job"), num(f.trace[b], "t")
			r := f.find(b+1, func(l line) bool { return ev(l) == "blocking_release" && inum(l, "job") == j })
			adm, ts := clone(f.trace[r+1]), clone(f.trace[r+2])
			if ev(adm) != "admission" || ev(ts) != "transport_start" {
				continue
			}
			f.remove(r + 2)
			f.remove(r + 1)
			f.remove(r)
			setNum(adm, "t", t0)
			setNum(ts, "t", t0)
			f.trace[b] = adm
			f.insert(b+1, ts)
			return
		}
	}},
	{name: "re-route offered while no other cell can take the job", want: ckReroute, mutate: func(t *testing.T, f *runFiles) {
		r := f.find(0, func(l line) bool { return ev(l) == "blocking_release" })
		for ; r >= 0 && ev(f.trace[r+1]) != "stage_release_ready"; r = f.find(r+1, func(l line) bool { return ev(l) == "blocking_release" }) {
		}
		if r < 0 {
			t.Fatal("no re-route in the base run")
		}
		// Only the full cell can do the operation now.
		op, dest := f.opType(inum(f.trace[r], "job"), inum(f.trace[r], "op")), str(f.trace[r], "cell")
		for _, c := range f.cells() {
			if c["id"] != dest {
				if caps, ok := c["capabilities"].(map[string]any); ok {
					delete(caps, op)
				}
			}
		}
	}},
	{name: "time goes back", want: ckTime, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(len(f.trace)/2, func(l line) bool { return num(l, "t") > 1 })
		setNum(f.trace[i], "t", num(f.trace[i], "t")-1)
	}},
	{name: "transport duration altered", want: ckTransport, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(0, func(l line) bool { return ev(l) == "transport_start" })
		setNum(f.trace[i], "dur", num(f.trace[i], "dur")+0.5)
	}},
	{name: "stage_release_ready deleted", want: ckSequence, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(0, func(l line) bool { return ev(l) == "stage_release_ready" && inum(l, "op") > 0 })
		f.remove(i)
	}},
	{name: "start before the transport completes", want: ckNotInBuffer, mutate: func(t *testing.T, f *runFiles) {
		for i, l := range f.trace {
			if ev(l) != "transport_start" || num(l, "dur") <= 0 {
				continue
			}
			k := f.find(i+1, func(x line) bool {
				return (ev(x) == "setup_start" || ev(x) == "process_start") && inum(x, "job") == inum(l, "job")
			})
			s := f.remove(k)
			setNum(s, "t", num(l, "t"))
			f.insert(i+1, s)
			return
		}
	}},
	{name: "transport ends in another cell", want: ckRouteCell, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(0, func(l line) bool { return ev(l) == "transport_complete" })
		for _, c := range f.cells() {
			if c["id"] != str(f.trace[i], "cell") {
				f.trace[i]["cell"] = c["id"]
				return
			}
		}
	}},
	{name: "setup deleted", want: ckSetup, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(0, func(l line) bool { return ev(l) == "setup_start" })
		j := f.find(i, func(l line) bool { return ev(l) == "setup_complete" && sameMachine(l, f.trace[i]) })
		setNum(f.trace[j+1], "t", num(f.trace[i], "t"))
		f.remove(j)
		f.remove(i)
	}},
	{name: "processing times in instance.json tripled", want: ckProcess, mutate: func(t *testing.T, f *runFiles) {
		for _, p := range f.instance["products"].([]any) {
			for _, op := range p.(map[string]any)["route"].([]any) {
				m := op.(map[string]any)
				setNumMap(m, "time", numMap(m, "time")*3)
			}
		}
	}},
	{name: "start delayed while the machine idles", want: ckDispatch, mutate: func(t *testing.T, f *runFiles) {
		for i, l := range f.trace {
			if ev(l) != "transport_complete" || ev(f.trace[i+1]) != "process_start" || inum(f.trace[i+1], "job") != inum(l, "job") {
				continue
			}
			fin := f.find(i+2, func(x line) bool { return ev(x) == "finish" && inum(x, "job") == inum(l, "job") })
			next := f.find(i+2, func(x line) bool { return num(x, "t") > num(l, "t") })
			if next < 0 || next >= fin || ev(f.trace[next]) == "power_change" {
				continue
			}
			s := f.remove(i + 1)
			setNum(s, "t", num(f.trace[next-1], "t"))
			f.insert(next-1, s)
			return
		}
		t.Fatal("no candidate")
	}},
	{name: "machines of a cell renamed (0 <-> 1)", want: ckDispatchRule, mutate: func(t *testing.T, f *runFiles) {
		swap := func(l line, k string) {
			switch inum(l, k) {
			case 0:
				setNum(l, k, 1)
			case 1:
				setNum(l, k, 0)
			}
		}
		for _, l := range f.trace {
			if str(l, "cell") == "C08" && has(l, "machine") {
				swap(l, "machine")
			}
			if str(l, "from") == "C08" && has(l, "from_machine") {
				swap(l, "from_machine")
			}
		}
	}},
	{name: "repair deleted", want: ckBreakdown, mutate: func(t *testing.T, f *runFiles) {
		for i, l := range f.trace {
			if ev(l) == "repair" && f.find(i+1, func(x line) bool { return ev(x) == "breakdown" && sameMachine(x, l) }) > 0 {
				f.remove(i)
				if ev(f.trace[i]) == "process_resume" {
					f.remove(i)
				}
				return
			}
		}
		t.Fatal("no machine breaks down twice")
	}},
	{name: "breakdown on a cell without breakdowns", want: ckBreakdown, mutate: func(t *testing.T, f *runFiles) {
		f.insert(3, line{"t": json.Number("0"), "ev": "breakdown", "cell": "C12", "machine": json.Number("0")})
	}},
	{name: "power_change duplicated", want: ckPowerRecord, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(10, func(l line) bool { return ev(l) == "power_change" })
		f.insert(i+1, clone(f.trace[i]))
	}},
	{name: "status says deadlock", want: ckStatus, mutate: func(t *testing.T, f *runFiles) {
		f.trace[len(f.trace)-1]["status"] = "deadlock"
	}},
	{name: "decision action altered", want: ckDecisions, mutate: func(t *testing.T, f *runFiles) {
		for i, b := range f.decisions {
			d := decode(t, b)
			if d["kind"] != "select_cell" || len(d["payload"].(map[string]any)["options"].([]any)) < 2 {
				continue
			}
			a := inum(d, "action")
			setNum(d, "action", float64(1-min(a, 1)))
			f.decisions[i], _ = json.Marshal(d)
			return
		}
		t.Fatal("no select_cell decision with two options")
	}},
	{name: "message line lost", want: ckMessages, mutate: func(t *testing.T, f *runFiles) {
		f.messages = f.messages[:len(f.messages)-1]
	}},
	{name: "file changed after the manifest", want: ckManifest, mutate: func(t *testing.T, f *runFiles) {
		f.rehash = false
		f.messages[0] = bytes.Replace(f.messages[0], []byte(`"step":`), []byte(`"step": `), 1)
	}},
	{name: "header wip_cap altered", want: ckHeader, mutate: func(t *testing.T, f *runFiles) {
		setNum(f.trace[0], "wip_cap", num(f.trace[0], "wip_cap")+1)
	}},
	{name: "arrival duplicated", want: ckJobState, mutate: func(t *testing.T, f *runFiles) {
		i := f.find(0, func(l line) bool { return ev(l) == "arrival" })
		f.insert(i+1, clone(f.trace[i]))
	}},
	{name: "unknown event", want: ckFormat, mutate: func(t *testing.T, f *runFiles) {
		f.trace[5]["ev"] = "teleport"
	}},
	{name: "cell without power figures", want: ckInstance, mutate: func(t *testing.T, f *runFiles) {
		delete(f.cells()[0], "power_kw")
	}},
}

func numMap(m map[string]any, k string) float64 {
	f, _ := strconv.ParseFloat(string(m[k].(json.Number)), 64)
	return f
}

func setNumMap(m map[string]any, k string, v float64) {
	m[k] = json.Number(strconv.FormatFloat(v, 'g', -1, 64))
}

// runMutation applies mu to a copy of the run in src and checks it: the
// run stays OK when mu wants nothing, else mu's check fires with its
// message (reported true).
func runMutation(t *testing.T, src string, mu mutation) bool {
	t.Helper()
	f := loadRun(t, src)
	mu.mutate(t, f)
	dir := t.TempDir()
	f.write(t, dir)
	rep, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mu.want == "" {
		if !rep.OK() {
			t.Fatalf("want no problem, got %d:%s", len(rep.Problems), problemsText(rep, 10))
		}
		return false
	}
	for _, p := range rep.Problems {
		if p.Check == mu.want && strings.Contains(p.Msg, mu.msg) {
			return true
		}
	}
	t.Errorf("check %q (%q) did not fire; got %d problems:%s", mu.want, mu.msg, len(rep.Problems), problemsText(rep, 10))
	return false
}

func TestMutations(t *testing.T) {
	src := base(t)
	fired := map[string]bool{}
	for _, mu := range mutations {
		t.Run(mu.name, func(t *testing.T) {
			if runMutation(t, src, mu) {
				fired[mu.want] = true
			}
		})
	}
	// Every check id has a mutation that makes it fire.
	for _, id := range []string{ckFormat, ckHeader, ckTime, ckSequence, ckJobState, ckOverlap, ckOpOrder, ckRouteCell,
		ckNotInBuffer, ckCapability, ckBuffer, ckBlocking, ckReroute, ckDown, ckBreakdown, ckTransport, ckSetup, ckProcess,
		ckPowerLevel, ckPowerRecord, ckDispatch, ckDispatchRule, ckStatus, ckMetrics, ckDecisions, ckMessages, ckManifest, ckInstance} {
		if !fired[id] {
			t.Errorf("no mutation made check %q fire", id)
		}
	}
}

// TestMetricFields: each recomputed metric is compared (one field altered
// at a time).
func TestMetricFields(t *testing.T) {
	src := base(t)
	for _, key := range []string{"G_mk", "G_cj", "G_vc", "G_eo", "G_ed", "G_en", "G_ds", "G_cm", "G_fb", "G_llm", "G_tr",
		"G_dj", "G_ut", "G_do", "violations.power_overshoot_units", "violations.power_overshoot_entries", "violations.blocking", "violations.wip", "secondary.carbon_kg",
		"secondary.setup_time", "secondary.busy_time", "secondary.transport_time", "secondary.blocking_time",
		"secondary.machine_blocked_time", "secondary.buffer_wait_time", "secondary.down_time", "secondary.breakdowns", "secondary.reroutes",
		"secondary.jobs", "secondary.decisions", "secondary.llm_calls", "secondary.prompt_tokens", "secondary.completion_tokens"} {
		f := loadRun(t, src)
		m := f.metrics
		path := strings.Split(key, ".")
		for _, p := range path[:len(path)-1] {
			m = m[p].(map[string]any)
		}
		k := path[len(path)-1]
		setNumMap(m, k, numMap(m, k)+1)
		dir := t.TempDir()
		f.write(t, dir)
		rep, err := Dir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 1 || rep.Problems[0].Check != ckMetrics || !strings.HasPrefix(rep.Problems[0].Msg, key+":") {
			t.Errorf("%s+1: want exactly one metrics problem about it, got:%s", key, problemsText(rep, 5))
		}
	}
	// Status, instance and seed too.
	f := loadRun(t, src)
	f.metrics["status"] = "deadlock"
	f.metrics["instance"] = "other"
	setNumMap(f.metrics, "seed", 99)
	dir := t.TempDir()
	f.write(t, dir)
	rep, _ := Dir(dir)
	if n := len(rep.Problems); n != 3 {
		t.Errorf("status/instance/seed altered: want 3 problems, got:%s", problemsText(rep, 5))
	}
}

// TestByRole: secondary.by_role, when present, must give each role's
// decisions, fallbacks, calls and tokens as decisions.jsonl does.
func TestByRole(t *testing.T) {
	src := base(t)
	f := loadRun(t, src)
	byRole := map[string]any{}
	for _, b := range f.decisions {
		var a struct {
			Role   string `json:"role"`
			Source string `json:"source"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		r, _ := byRole[a.Role].(map[string]any)
		if r == nil {
			r = map[string]any{"decisions": 0.0, "fallbacks": 0.0, "llm_calls": 0.0, "prompt_tokens": 0.0, "completion_tokens": 0.0, "models": "m"}
			byRole[a.Role] = r
		}
		r["decisions"] = r["decisions"].(float64) + 1
		if a.Source == "fallback" {
			r["fallbacks"] = r["fallbacks"].(float64) + 1
		}
	}
	if len(byRole) == 0 {
		t.Fatal("no roles")
	}
	f.metrics["secondary"].(map[string]any)["by_role"] = byRole
	dir := t.TempDir()
	f.write(t, dir)
	if rep, err := Dir(dir); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("a true by_role: %v%s", err, problemsText(rep, 5))
	}
	for _, mutate := range []struct{ role, field string }{{"plant", "decisions"}, {"plant", "llm_calls"}, {"plant", "completion_tokens"}, {"plant", "fallbacks"}} {
		f := loadRun(t, dir)
		r := f.metrics["secondary"].(map[string]any)["by_role"].(map[string]any)[mutate.role].(map[string]any)
		setNumMap(r, mutate.field, numMap(r, mutate.field)+1)
		d := t.TempDir()
		f.write(t, d)
		rep, err := Dir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 1 || rep.Problems[0].Check != ckMetrics || !strings.HasPrefix(rep.Problems[0].Msg, "secondary.by_role."+mutate.role+":") {
			t.Errorf("%s.%s+1: want one by_role problem, got:%s", mutate.role, mutate.field, problemsText(rep, 5))
		}
	}
	// A role no decision has.
	f = loadRun(t, dir)
	f.metrics["secondary"].(map[string]any)["by_role"].(map[string]any)["selector"] = map[string]any{"decisions": 1.0}
	d := t.TempDir()
	f.write(t, d)
	if rep, _ := Dir(d); len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Msg, "no decision of that role") {
		t.Errorf("invented role: got:%s", problemsText(rep, 5))
	}
}

func TestDirErrors(t *testing.T) {
	src := base(t)
	// A missing file.
	dir := t.TempDir()
	loadRun(t, src).write(t, dir)
	os.Remove(filepath.Join(dir, fileMessages))
	if _, err := Dir(dir); err == nil {
		t.Error("missing messages.jsonl: no error")
	}
	// A malformed trace line is an error naming file and line.
	dir = t.TempDir()
	loadRun(t, src).write(t, dir)
	p := filepath.Join(dir, fileTrace)
	b, _ := os.ReadFile(p)
	ls := bytes.SplitN(b, []byte("\n"), 5)
	ls[3] = []byte(`{"t":1,"ev":`)
	os.WriteFile(p, bytes.Join(ls, []byte("\n")), 0o644)
	if _, err := Dir(dir); err == nil || !strings.Contains(err.Error(), "trace.jsonl:4") {
		t.Errorf("malformed line 4: err = %v", err)
	}
	// Malformed metrics.json names its line too.
	dir = t.TempDir()
	loadRun(t, src).write(t, dir)
	os.WriteFile(filepath.Join(dir, fileMetrics), []byte("{\n\"G_mk\": 1,\n\"G_td\": x\n}"), 0o644)
	if _, err := Dir(dir); err == nil || !strings.Contains(err.Error(), "metrics.json:3") {
		t.Errorf("malformed metrics.json: err = %v", err)
	}
}
