package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
)

// TestZeroKnobsLeaveArtifactsUnchanged: a built-in paradigm and its copy
// from a file that spells out the communication switches at their zero
// values (bid_invitations: 0, view_detail: full) write the same trace,
// decisions, messages and metrics, byte for byte (the metrics' paradigm
// id aside).
func TestZeroKnobsLeaveArtifactsUnchanged(t *testing.T) {
	p := plantOf(t, "A5C12-1")
	for _, b := range coord.Builtins() {
		text := strings.Join([]string{
			"mode_id: " + b.ID + "_copy",
			"routing_authority_mode: " + b.RoutingAuthorityMode,
			"cell_contract_actions: " + b.CellContractActions,
			"area_local_reroute_enabled: " + boolText(b.AreaLocalRerouteEnabled),
			"plant_reroute_required: " + boolText(b.PlantRerouteRequired),
			"mediated_bid_round_enabled: " + boolText(b.MediatedBidRoundEnabled),
			"bid_invitations: 0",
			"view_detail: full",
		}, "\n") + "\n"
		path := filepath.Join(t.TempDir(), "copy.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cp, err := new(coord.Paradigms).AddFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, ctl := range []string{"rule", "random"} {
			dirs := [2]string{t.TempDir(), t.TempDir()}
			for i, m := range []coord.AuthorityMode{b, cp} {
				c, err := policy.New(ctl, 2)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := RunToDir(context.Background(), Episode{Plant: p, Seed: 2, Mode: m, Controller: c}, dirs[i]); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{FileTrace, FileDecisions, FileMessages, FileMetrics} {
				a, err := os.ReadFile(filepath.Join(dirs[0], name))
				if err != nil {
					t.Fatal(err)
				}
				c, err := os.ReadFile(filepath.Join(dirs[1], name))
				if err != nil {
					t.Fatal(err)
				}
				if name == FileMetrics {
					c = bytes.Replace(c, []byte(`"`+cp.ID+`"`), []byte(`"`+b.ID+`"`), 1)
				}
				if !bytes.Equal(a, c) || len(a) == 0 {
					t.Errorf("%s %s: %s differs between the built-in and its copy with zero switches", b.ID, ctl, name)
				}
			}
		}
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestSummaryViewsCostWhatControllersRead: the built-in rule reads a
// cell's machines by state only, so with summary views it takes the same
// decisions under every built-in paradigm (same metrics); greedy's bid
// reads what each idle machine is set up for, which a summary hides, so
// in a contract net with summary views it never bids high, and decides
// otherwise.
func TestSummaryViewsCostWhatControllersRead(t *testing.T) {
	p := plantOf(t, "A5C12-1")
	metrics := func(m coord.AuthorityMode, c coord.Controller, seed uint64) (Metrics, *bytes.Buffer) {
		var dec bytes.Buffer
		r := Run(context.Background(), Episode{Plant: p, Seed: seed, Mode: m, Controller: c, Decisions: &dec})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		r.Metrics.Paradigm = ""
		return r.Metrics, &dec
	}
	for _, b := range coord.Builtins() {
		s := b
		s.ID, s.ViewDetail = b.ID+"_summary", coord.DetailSummary
		full, _ := metrics(b, policy.Rule{}, 1)
		short, _ := metrics(s, policy.Rule{}, 1)
		if !reflect.DeepEqual(full, short) {
			t.Errorf("%s: rule decides otherwise with summary views:\n%+v\n%+v", b.ID, full, short)
		}
	}
	cnp := coord.HeterarchicalCNP()
	sum := cnp
	sum.ID, sum.ViewDetail = "cnp_summary", coord.DetailSummary
	greedy, _ := policy.New("greedy", 1)
	full, fullDec := metrics(cnp, greedy, 1)
	short, shortDec := metrics(sum, greedy, 1)
	highs := func(dec *bytes.Buffer) int {
		n := 0
		for _, l := range bytes.Split(dec.Bytes(), []byte("\n")) {
			var a struct {
				Kind    string `json:"kind"`
				Action  int    `json:"action"`
				Payload struct {
					Options []struct {
						Bid string `json:"bid"`
					} `json:"options"`
				} `json:"payload"`
			}
			if len(l) == 0 || json.Unmarshal(l, &a) != nil || a.Kind != coord.KindBid {
				continue
			}
			if a.Payload.Options[a.Action].Bid == "high" {
				n++
			}
		}
		return n
	}
	if h := highs(shortDec); h != 0 {
		t.Errorf("greedy bid high %d times with summary views, which hide set-ups", h)
	}
	if highs(fullDec) == 0 || reflect.DeepEqual(full, short) {
		t.Errorf("greedy bids high %d times with full views, and decides the same with summaries", highs(fullDec))
	}
}
