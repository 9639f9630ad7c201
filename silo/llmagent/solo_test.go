package llmagent_test

import (
	"regexp"
	"testing"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/task"
)

// peerWords are phrases that assume other agents (as in package task's
// TestSoloPrompts).
var peerWords = regexp.MustCompile(`(?i)\b(agents|teams?|peers?|the others|other agents?|another agent|each agent|every agent|agent i|multi-agent|collaborat\w*|communicat\w*)\b`)

// TestSoloPrompts: what a single agent reads (system prompt, task prompt,
// planning note, reminders, scratchpad section, the tools offered, in XML
// and native form) never mentions other agents, a team or communication;
// checked on the requests a real run sends to a stub model, for a seeded
// N = 1 instance and a merged baseline, and the agent still solves the
// task.
func TestSoloPrompts(t *testing.T) {
	src, err := task.Official("III-29", 5)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := task.Merged(src)
	if err != nil {
		t.Fatal(err)
	}
	sc := llmagent.Scaffold{Planning: true, Reminders: true, Scratchpad: true}
	for _, in := range []*task.Instance{seeded(t, "I-01", 1), merged} {
		for _, p := range []proto.Protocol{proto.P2P, proto.Broadcast, proto.SFS} {
			for _, native := range []bool{false, true} {
				srv := stubmodel.NewServer(gatherModel(in, nil))
				out := play(t, in, p, llmagent.Config{Model: client(t, srv, nil), Native: native, Scaffold: sc}, 5)
				srv.Close()
				name := in.Task.ID + "/" + string(p)
				if !out.res.Success {
					t.Errorf("%s native=%v: not solved: %+v", name, native, out.res.Agents)
				}
				reqs := srv.Requests()
				if len(reqs) < 2 {
					t.Fatalf("%s: %d requests; want the planning round and more", name, len(reqs))
				}
				for _, req := range reqs {
					for _, m := range req.Messages {
						if m.Role == "assistant" {
							continue // the stub's own words
						}
						if w := peerWords.FindString(m.Content); w != "" {
							t.Errorf("%s native=%v: a %s message says %q:\n%s", name, native, m.Role, w, m.Content)
						}
					}
					for _, tool := range req.Tools {
						if tool.Name != proto.ToolWait && tool.Name != proto.ToolSubmit {
							t.Errorf("%s: tool %s offered to a single agent", name, tool.Name)
						}
					}
				}
			}
		}
	}
}
