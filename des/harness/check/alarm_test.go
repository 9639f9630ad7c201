package check

import (
	"encoding/json"
	"testing"
)

// TestAlarmsActivateThePlant: on runs with power pressure and breakdowns,
// the plant is activated by power alarms and breakdowns (the audit found 0
// activations for 24,511 over-cap entries), jobs queued at a broken cell
// are offered to routing (queue_release), the re-checker counts the
// activations by trigger and finds every alarm answered; relabelling the
// triggers is caught both ways.
func TestAlarmsActivateThePlant(t *testing.T) {
	total := map[string]int{}
	var src string
	for _, r := range []struct {
		inst string
		seed uint64
	}{{"A5C12-2", 21}, {"A3C9-1", 16}} {
		dir := t.TempDir()
		runDir(t, r.inst, "rule", r.seed, dir)
		rep, err := Dir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Fatalf("%s seed %d: %s", r.inst, r.seed, problemsText(rep, 10))
		}
		t.Logf("%s rule seed %d: release decisions by trigger %v, %d queue offers", r.inst, r.seed,
			rep.Stats.ReleaseTriggers, rep.Stats.Events["queue_release"])
		for k, v := range rep.Stats.ReleaseTriggers {
			total[k] += v
		}
		total["queue_release"] += rep.Stats.Events["queue_release"]
		if src == "" {
			src = dir
		}
	}
	for _, trig := range []string{"power_alarm", "breakdown", "queue_release"} {
		if total[trig] == 0 {
			t.Errorf("no release decision with trigger %s, or no queue offer: %v", trig, total)
		}
	}

	relabel := func(t *testing.T, f *runFiles, from, to string, all bool) {
		t.Helper()
		var at json.Number
		n := 0
		for i, b := range f.decisions {
			d := decode(t, b)
			p := d["payload"].(map[string]any)
			ctx := p["context"].(map[string]any)
			if d["kind"] != "release" || ctx["trigger"] != from || (at != "" && d["time"] != at) {
				continue
			}
			if at == "" {
				at = d["time"].(json.Number)
			}
			ctx["trigger"] = to
			f.decisions[i], _ = json.Marshal(d)
			n++
			if !all {
				break
			}
		}
		if n == 0 {
			t.Fatalf("no release decision with trigger %s", from)
		}
	}
	for _, mu := range []mutation{
		{name: "power alarm unanswered", want: ckAlarm, msg: "no release decision then has trigger power_alarm", mutate: func(t *testing.T, f *runFiles) {
			relabel(t, f, "power_alarm", "arrival", true)
		}},
		{name: "breakdown unanswered", want: ckAlarm, msg: "trigger breakdown", mutate: func(t *testing.T, f *runFiles) {
			relabel(t, f, "breakdown", "job_complete", true)
		}},
		{name: "alarm that was not raised", want: ckAlarm, msg: "the trace has no breakdown", mutate: func(t *testing.T, f *runFiles) {
			relabel(t, f, "arrival", "breakdown", false)
		}},
	} {
		t.Run(mu.name, func(t *testing.T) { runMutation(t, src, mu) })
	}
}
