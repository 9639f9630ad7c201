package llmctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// A model that names escalate where an area's view withholds it (the
// index after the options, where escalate stands when offered) is
// replaced by the fallback, and the audit says why escalate is not
// offered (docs/paradigms.md, "Escalation").
func TestWithheldEscalateIsExplained(t *testing.T) {
	past := func(r stubmodel.ChatRequest) stubmodel.Reply {
		n := strings.Count(r.Messages[len(r.Messages)-1].Content, `"index":`)
		return stubmodel.Text(`{"action": ` + strconv.Itoa(n) + `}`)
	}
	var dec bytes.Buffer
	r := harness.Run(context.Background(), harness.Episode{Plant: plant(t, "A3C9-1"), Seed: 1, Mode: coord.Hierarchical(),
		Controller: oneAttempt(t, stubURL(t, past)), Decisions: &dec})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	explained := 0
	for line := range bytes.Lines(dec.Bytes()) {
		var a coord.Audit
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatal(err)
		}
		if a.Role == coord.RoleArea && a.Kind == coord.KindSelectCell && strings.Contains(a.Reason, ": escalate is not offered while local recovery is possible (cell ") {
			explained++
		}
	}
	if explained == 0 {
		t.Errorf("no area's withheld escalate was explained (G_fb %d of %d decisions)", r.Metrics.GFb, r.Metrics.Secondary.Decisions)
	}
}
