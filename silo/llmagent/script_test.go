package llmagent_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coordbench/coordbench/llm/stubmodel"
	"github.com/coordbench/coordbench/llm/stubmodel/silogather"
	"github.com/coordbench/coordbench/silo/task"
)

// gatherModel is the scripted test model (package silogather) with an
// instance as its oracle: an agent whose task prompt does not show its
// shard of in replies without a call, and agent 0, once it has received
// every shard intact, takes the instance's gold answers (the model
// "computes correctly"). wrong, if set, changes agent i's submitted answer.
func gatherModel(in *task.Instance, wrong func(id int, ans json.RawMessage) json.RawMessage) func(stubmodel.ChatRequest) stubmodel.Reply {
	m := silogather.Model{Solve: instanceSolver(in), Wrong: wrong}
	return func(req stubmodel.ChatRequest) stubmodel.Reply {
		v, ok := silogather.ReadView(req)
		if !ok {
			return stubmodel.Text("no agent here")
		}
		if !strings.Contains(v.Prompt, in.ShardText(v.ID)) {
			return silogather.Render(v, nil) // not our instance: reply without a call
		}
		return m.Handle(req)
	}
}

// instanceSolver returns in's gold answers if every shard text is the
// matching agent's shard of in.
func instanceSolver(in *task.Instance) func(string, []string) ([]json.RawMessage, error) {
	return func(_ string, texts []string) ([]json.RawMessage, error) {
		if len(texts) != in.N {
			return nil, fmt.Errorf("%d shards, instance has %d", len(texts), in.N)
		}
		for i, text := range texts {
			if text != in.ShardText(i) {
				return nil, fmt.Errorf("shard text %d is not agent %d's shard", i, i)
			}
		}
		return in.Expected, nil
	}
}
