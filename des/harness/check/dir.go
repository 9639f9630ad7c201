package check

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/inputfile"
)

// Artifact file names.
const (
	fileTrace     = "trace.jsonl"
	fileDecisions = "decisions.jsonl"
	fileMessages  = "messages.jsonl"
	fileMetrics   = "metrics.json"
	fileManifest  = "manifest.json"
	fileInstance  = "instance.json"

	traceFormat = "coordbench-trace/v1"
)

// manifestFile is the part of manifest.json the checker verifies.
type manifestFile struct {
	Instance       string  `json:"instance"`
	InstanceSHA256 string  `json:"instance_sha256"`
	Seed           *uint64 `json:"seed"`
	Paradigm       struct {
		ID       string         `json:"mode_id"`
		Routing  string         `json:"routing_authority_mode"`
		Contract string         `json:"cell_contract_actions"`
		Bids     bool           `json:"mediated_bid_round_enabled"`
		Invite   int            `json:"bid_invitations"`
		Adaptive *paradigmRules `json:"adaptive"`
	} `json:"paradigm"`
	Controller  string            `json:"controller"`
	TraceFormat string            `json:"trace_format"`
	Status      string            `json:"status"`
	Files       map[string]string `json:"files_sha256"`
}

type messageLine struct {
	Step int     `json:"step"`
	Time float64 `json:"time"`
	Type string  `json:"type"`
}

// complete reports an error unless dir is a directory holding every
// artifact of a run. des run writes a run directory whole (a temporary
// directory renamed into place), so a partial one was left by a run that
// was killed or is still writing, or by another tool: say so, rather than
// report the first missing file.
func complete(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory: give a run directory (one that des run wrote)", dir)
	}
	var missing []string
	for _, name := range []string{fileInstance, fileManifest, fileMetrics, fileTrace, fileDecisions, fileMessages} {
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s is an incomplete run directory (no %s): the run that wrote it was interrupted before it wrote its artifacts, or is still running; run it again", dir, strings.Join(missing, ", "))
	}
	return nil
}

// Dir checks the run directory dir. The error is set only when a file is
// missing or unreadable or holds malformed JSON (reported as file:line);
// every violated property is a Problem of the report.
func Dir(dir string) (*Report, error) {
	rep := &Report{Dir: dir, Stats: Stats{Events: map[string]int{}}}
	sums := map[string]string{}
	add := func(check, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{Check: check, Msg: fmt.Sprintf(format, args...)})
	}

	if err := complete(dir); err != nil {
		return rep, err
	}
	var inst factory.Instance
	if _, err := readJSON(dir, fileInstance, &inst, sums); err != nil {
		return rep, err
	}
	var man manifestFile
	if _, err := readJSON(dir, fileManifest, &man, sums); err != nil {
		return rep, err
	}
	var met harness.Metrics
	if _, err := readJSON(dir, fileMetrics, &met, sums); err != nil {
		return rep, err
	}

	checkReportedDues(&inst, add)
	c := newChecker(rep, &inst)
	c.adaptive = man.Paradigm.Adaptive != nil
	if err := readLines(dir, fileTrace, sums, nil, func(r io.Reader) error { return c.run(r) }); err != nil {
		return rep, err
	}

	var audits []auditLine
	invites := newInviteCheck(man.invitations())
	if err := readLines(dir, fileDecisions, sums, func(line int, b []byte) error {
		var a auditLine
		if err := json.Unmarshal(b, &a); err != nil {
			return err
		}
		audits = append(audits, a)
		invites.audit(line, b)
		return nil
	}, nil); err != nil {
		return rep, err
	}
	byType := map[string]int{}
	nMessages := 0
	var rejects []msgRec // what the mode check needs of the messages: the rejections
	if err := readLines(dir, fileMessages, sums, func(line int, b []byte) error {
		var m messageLine
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		byType[m.Type]++
		nMessages++
		invites.message(b)
		if m.Type == "reject" && len(c.modes) > 0 {
			rejects = append(rejects, msgRec{step: m.Step, t: m.Time, typ: m.Type})
		}
		return nil
	}, nil); err != nil {
		return rep, err
	}
	rep.Stats.Decisions, rep.Stats.Messages = len(audits), nMessages

	dec := checkDecisions(audits, add)
	own := ownMode{id: man.Paradigm.ID, routing: man.Paradigm.Routing, bids: man.Paradigm.Bids}
	checkModes(c, man.Paradigm.Adaptive, own, rejects, audits, add)
	invites.check(c.plant, own.id, add)
	crossCheck(audits, c.commits, own.id, contractModes(&man), c.localRoom, add)
	checkAlarms(audits, c.alarms, &rep.Stats, add)
	if dec.messages != nMessages {
		add(ckMessages, "decisions.jsonl counts %d messages, messages.jsonl has %d lines", dec.messages, nMessages)
	}
	compareMetrics(&met, c, dec, byType, add)
	checkManifest(&man, &met, c, sums, add)
	return rep, nil
}

// maxJSONFile bounds each JSON document of a run directory the check
// reads whole (instance.json, manifest.json, metrics.json): far above what
// a run within the plant limits writes, low enough that a hostile
// directory cannot exhaust memory.
const maxJSONFile = 256 << 20

// readJSON reads one JSON document (a regular file of at most
// maxJSONFile bytes), records its hash, and reports a syntax error as
// file:line.
func readJSON(dir, name string, v any, sums map[string]string) ([]byte, error) {
	b, err := inputfile.Read(filepath.Join(dir, name), name, maxJSONFile)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	sums[name] = hex.EncodeToString(sum[:])
	if err := json.Unmarshal(b, v); err != nil {
		line := 1
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line += bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
		case errors.As(err, &te):
			line += bytes.Count(b[:min(int(te.Offset), len(b))], []byte("\n"))
		}
		return nil, fmt.Errorf("%s:%d: %w", name, line, err)
	}
	return b, nil
}

// Bounds of the JSON-lines logs the check streams (trace.jsonl,
// decisions.jsonl, messages.jsonl), as des rescore has them: a log of at
// most maxLogFile bytes, lines of at most maxLine (a decision carries its
// payload), so that a hostile directory cannot exhaust memory.
const (
	maxLogFile = 16 << 30
	maxLine    = 64 << 20
)

// readLines streams a JSON-lines file (a regular file of at most
// maxLogFile bytes, lines of at most maxLine), hashing it, either line by
// line (each: the non-blank lines) or as a whole (whole).
func readLines(dir, name string, sums map[string]string, each func(line int, b []byte) error, whole func(io.Reader) error) error {
	f, err := inputfile.OpenMax(filepath.Join(dir, name), name, maxLogFile)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	r := io.TeeReader(f, h)
	if whole != nil {
		if err := whole(r); err != nil {
			return err
		}
	} else if err := eachLine(name, r, each); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	sums[name] = hexSum(h)
	return nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

func eachLine(name string, r io.Reader, each func(line int, b []byte) error) error {
	return inputfile.Lines(r, name, "run log", maxLine, func(line int, b []byte) error {
		if t := bytes.TrimSpace(b); len(t) > 0 {
			return each(line, t)
		}
		return nil
	})
}

// decisionTotals is what decisions.jsonl determines of the metrics.
type decisionTotals struct {
	steps    int // distinct step values
	messages int
	bySource map[string]int
	usage    harness.RoleUsage            // every answer's model usage
	byRole   map[string]harness.RoleUsage // the same by role, with decisions and fallbacks
}

var knownSources = map[string]bool{"builtin": true, "llm": true, "external": true, "fallback": true}

func checkDecisions(audits []auditLine, add func(check, format string, args ...any)) decisionTotals {
	d := decisionTotals{bySource: map[string]int{}, byRole: map[string]harness.RoleUsage{}}
	seen := map[int]bool{}
	lastStep, lastT := math.MinInt, math.Inf(-1)
	for i, a := range audits {
		line := i + 1
		if a.Step == nil || a.Time == nil || a.Action == nil || a.Messages == nil || a.Source == "" || a.Kind == "" {
			add(ckDecisions, "decisions.jsonl:%d: missing step, time, kind, action, source or messages", line)
			continue
		}
		if !seen[*a.Step] {
			seen[*a.Step] = true
			d.steps++
		}
		if *a.Step < lastStep || *a.Time < lastT {
			add(ckDecisions, "decisions.jsonl:%d: step %d at t=%v comes after step %d at t=%v", line, *a.Step, *a.Time, lastStep, lastT)
		}
		lastStep, lastT = *a.Step, *a.Time
		if *a.Messages < 0 {
			add(ckDecisions, "decisions.jsonl:%d: negative message count", line)
		}
		d.messages += *a.Messages
		d.bySource[a.Source]++
		r := d.byRole[a.Role]
		r.Decisions++
		if a.Source == "fallback" {
			r.Fallbacks++
		}
		for _, u := range []*harness.RoleUsage{&r, &d.usage} {
			u.LLMCalls += a.Calls
			u.PromptTokens += a.PromptTokens
			u.CompletionTokens += a.CompletionTokens
			u.PromptCachedTokens += a.PromptCachedTokens
		}
		d.byRole[a.Role] = r
		if !knownSources[a.Source] {
			add(ckDecisions, "decisions.jsonl:%d: unknown source %q", line, a.Source)
		}
		if a.Source == "fallback" && a.Reason == "" {
			add(ckDecisions, "decisions.jsonl:%d: a fallback without a reason", line)
		}
		if a.Payload == nil {
			add(ckDecisions, "decisions.jsonl:%d: no payload", line)
		} else if *a.Action < 0 || *a.Action >= len(a.Payload.Options) {
			add(ckDecisions, "decisions.jsonl:%d: action %d is not one of the %d options", line, *a.Action, len(a.Payload.Options))
		} else {
			if a.Kind == "plant_fallback" && a.Payload.Options[*a.Action].Action != "assign" {
				// Attribution: a plant-level fallback always places the item,
				// on the plant's cell or, after a decline, on the harness's.
				add(ckDecisions, "decisions.jsonl:%d: a plant_fallback committed %q, not a cell", line, a.Payload.Options[*a.Action].Action)
			}
			checkAttribution(line, &audits[i], add)
		}
	}
	return d
}

// feq compares floats with a relative tolerance of 1e-9.
func feq(a, b float64) bool {
	if a == b {
		return true
	}
	d := math.Abs(a - b)
	return d <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) || d < 1e-12
}

func compareMetrics(m *harness.Metrics, c *checker, d decisionTotals, byType map[string]int, add func(check, format string, args ...any)) {
	t := &c.tot
	f := func(name string, got, want float64) {
		if !feq(got, want) {
			add(ckMetrics, "%s: metrics.json says %v, the artifacts give %v", name, got, want)
		}
	}
	i := func(name string, got, want int) {
		if got != want {
			add(ckMetrics, "%s: metrics.json says %d, the artifacts give %d", name, got, want)
		}
	}
	s := func(name, got, want string) {
		if got != want {
			add(ckMetrics, "%s: metrics.json says %q, the trace says %q", name, got, want)
		}
	}
	s("instance", m.Instance, c.hdr.instance)
	if m.Seed != c.hdr.seed {
		add(ckMetrics, "seed: metrics.json says %d, the trace says %d", m.Seed, c.hdr.seed)
	}
	s("status", m.Status, t.status)

	f("G_mk", m.GMk, t.owedUntil)
	f("G_td", m.GTd, t.tardiness+t.unresolvedOverdue)
	i("G_cj", m.GCj, t.completed)
	viol := t.overSecs + t.blocking + t.wipViolations
	i("G_vc", m.GVc, viol)
	f("G_eo", m.GEo, t.overKWh)
	f("G_ed", m.GEd, t.overT)
	f("G_en", m.GEn, t.energy)
	i("G_ds", m.GDs, d.steps)
	i("G_cm", m.GCm, d.messages)
	i("G_fb", m.GFb, d.bySource["fallback"])
	i("G_llm", m.GLlm, d.bySource["llm"])
	tr := 0
	if t.status != "done" {
		tr = 1
	}
	i("G_tr", m.GTr, tr)
	i("G_dj", m.GDj, c.hdr.jobs-t.completed)
	f("G_ut", m.GUt, t.unresolvedOverdue)
	i("G_do", m.GDo, c.hdr.totalOps-t.finished)

	i("violations.power_overshoot_units", m.Violations.PowerOvershootUnits, t.overSecs)
	i("violations.power_overshoot_entries", m.Violations.PowerOvershootEntries, t.overEntries)
	i("violations.blocking", m.Violations.Blocking, t.blocking)
	i("violations.wip", m.Violations.WIP, t.wipViolations)

	sc := &m.Secondary
	f("secondary.carbon_kg", sc.CarbonKg, t.energy*c.hdr.carbon)
	f("secondary.setup_time", sc.SetupTime, t.state[mSetup])
	f("secondary.busy_time", sc.BusyTime, t.state[mBusy])
	f("secondary.machine_blocked_time", sc.MachineBlockedTime, t.state[mBlocked])
	f("secondary.down_time", sc.DownTime, t.state[mDown])
	f("secondary.transport_time", sc.TransportTime, t.transport)
	f("secondary.blocking_time", sc.BlockingTime, t.blockingT)
	f("secondary.buffer_wait_time", sc.BufferWaitTime, t.bufferWait)
	i("secondary.breakdowns", sc.Breakdowns, t.breakdowns)
	i("secondary.reroutes", sc.Reroutes, t.reroutes)
	i("secondary.jobs", sc.Jobs, c.hdr.jobs)
	n := 0
	for _, v := range d.bySource {
		n += v
	}
	i("secondary.decisions", sc.Decisions, n)
	countMap("secondary.decisions_by_source", sc.DecisionsBySource, d.bySource, add)
	countMap("secondary.messages_by_type", sc.MessagesByType, byType, add)
	i("secondary.llm_calls", sc.LLMCalls, d.usage.LLMCalls)
	i64 := func(name string, got, want int64) {
		if got != want {
			add(ckMetrics, "%s: metrics.json says %d, decisions.jsonl gives %d", name, got, want)
		}
	}
	i64("secondary.prompt_tokens", sc.PromptTokens, d.usage.PromptTokens)
	i64("secondary.completion_tokens", sc.CompletionTokens, d.usage.CompletionTokens)
	checkByRole(sc.ByRole, d.byRole, add)
}

// checkByRole compares secondary.by_role, when metrics.json has it (model-
// backed controllers), with the audits' figures by role (every field but
// the models, which the notes name).
func checkByRole(got, want map[string]harness.RoleUsage, add func(check, format string, args ...any)) {
	if got == nil {
		return
	}
	for _, role := range slices.Sorted(maps.Keys(want)) {
		g, w := got[role], want[role]
		g.Models = ""
		if g != w {
			add(ckMetrics, "secondary.by_role.%s: metrics.json says %+v, decisions.jsonl gives %+v", role, g, w)
		}
	}
	for _, role := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[role]; !ok {
			add(ckMetrics, "secondary.by_role.%s: no decision of that role in decisions.jsonl", role)
		}
	}
}

func countMap(name string, got, want map[string]int, add func(check, format string, args ...any)) {
	keys := map[string]bool{}
	for k, v := range got {
		if v != 0 {
			keys[k] = true
		}
	}
	for k, v := range want {
		if v != 0 {
			keys[k] = true
		}
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		if got[k] != want[k] {
			add(ckMetrics, "%s[%s]: metrics.json says %d, the artifacts give %d", name, k, got[k], want[k])
		}
	}
}

func checkManifest(man *manifestFile, met *harness.Metrics, c *checker, sums map[string]string, add func(check, format string, args ...any)) {
	for _, name := range []string{fileTrace, fileDecisions, fileMessages, fileMetrics, fileInstance} {
		got, ok := man.Files[name]
		switch {
		case !ok:
			add(ckManifest, "files_sha256 has no entry for %s", name)
		case got != sums[name]:
			add(ckManifest, "%s has sha256 %s, manifest.json says %s", name, sums[name], got)
		}
	}
	if man.InstanceSHA256 != sums[fileInstance] {
		add(ckManifest, "instance_sha256 %s does not match instance.json (%s)", man.InstanceSHA256, sums[fileInstance])
	}
	if man.Instance != c.hdr.instance {
		add(ckManifest, "instance %q, the trace says %q", man.Instance, c.hdr.instance)
	}
	if man.Seed == nil || *man.Seed != c.hdr.seed {
		add(ckManifest, "seed does not match the trace's %d", c.hdr.seed)
	}
	if man.Status != c.tot.status {
		add(ckManifest, "status %q, the trace ends with %q", man.Status, c.tot.status)
	}
	if man.Controller != met.Controller {
		add(ckManifest, "controller %q, metrics.json says %q", man.Controller, met.Controller)
	}
	if man.Paradigm.ID != met.Paradigm {
		add(ckManifest, "paradigm %q, metrics.json says %q", man.Paradigm.ID, met.Paradigm)
	}
	if r, builtin := acceptReject[man.Paradigm.ID]; builtin && man.Paradigm.Contract != "" && (man.Paradigm.Contract == "accept_reject") != r {
		add(ckManifest, "paradigm %s with cell_contract_actions %q: the built-in paradigm's cells %s", man.Paradigm.ID, man.Paradigm.Contract,
			map[bool]string{true: "may reject", false: "accept what they are given"}[r])
	}
	if man.TraceFormat != traceFormat {
		add(ckManifest, "trace_format %q, this checker reads %q", man.TraceFormat, traceFormat)
	}
}
