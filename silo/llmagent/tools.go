package llmagent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/proto"
)

// param is one tool parameter as the prompt and the function schema
// describe it.
type param struct {
	name, typ, desc string
	optional        bool
	schema          string // JSON Schema of the value
}

// toolSpec describes one protocol tool to the model: what it does, its
// parameters, what it returns, and a worked example (parameter name, value
// pairs, in order). The wording is ours; the names, parameters and result
// shapes are the published ones (docs/silo-protocols.md).
type toolSpec struct {
	name    string
	desc    string
	params  []param
	returns string
	example [][2]string
}

const (
	schemaInt  = `{"type":"integer"}`
	schemaStr  = `{"type":"string"}`
	schemaAny  = `{}`
	schemaBool = `{"type":"boolean"}`
	returnsEnd = `{"status": "waiting"}`
)

// specs returns the tool descriptions of protocol p, in the published
// order (proto.Tools), with the consensus helper's tools before wait when
// consensus is on (proto.ToolsWith).
func specs(p proto.Protocol, consensus bool) []toolSpec {
	content := param{"content", "string", "the text to deliver (data, a proposal, a result…)", false, schemaStr}
	byName := map[string]toolSpec{
		proto.ToolSend: {
			name:    proto.ToolSend,
			desc:    "Send a private message to one other agent. It can read it from the next round on, with receive_messages.",
			params:  []param{{"target_id", "integer", "id of the recipient (not yourself)", false, schemaInt}, content},
			returns: `{"success": true, "message": "..."}`,
			example: [][2]string{{"target_id", "1"}, {"content", "agent_0_data: [914, 1000, 37]"}},
		},
		proto.ToolReceive: {
			name:    proto.ToolReceive,
			desc:    receiveDesc(p),
			returns: `{"messages": [{"from": 1, "content": "...", "timestamp": 3}]}`,
		},
		proto.ToolBroadcast: {
			name:    proto.ToolBroadcast,
			desc:    "Send a message to every other agent at once. They can read it from the next round on, with receive_messages.",
			params:  []param{content},
			returns: `{"success": true, "broadcast_id": "..."}`,
			example: [][2]string{{"content", "agent_0_data: [914, 1000, 37]"}},
		},
		proto.ToolList: {
			name:    proto.ToolList,
			desc:    "List the ids of all agents in the team.",
			returns: `{"agent_ids": [0, 1, 2], "total": 3}`,
		},
		proto.ToolListFiles: {
			name:    proto.ToolListFiles,
			desc:    "List the shared files as they were at the end of the previous round, optionally only those whose path starts with a prefix.",
			params:  []param{{"prefix", "string", "only paths starting with this text", true, schemaStr}},
			returns: `{"files": [{"path": "agent_0_data", "modified_by": 0, "modified_at_round": 2}]}`,
			example: [][2]string{{"prefix", "agent_"}},
		},
		proto.ToolReadFile: {
			name:    proto.ToolReadFile,
			desc:    "Read one shared file as it was at the end of the previous round.",
			params:  []param{{"path", "string", "the file's path (key)", false, schemaStr}},
			returns: `{"success": true, "content": ..., "metadata": {"modified_by": 0, "modified_at_round": 2}}, or {"success": false, "content": null, "metadata": {}, "error": "Key not found: ..."}`,
			example: [][2]string{{"path", "agent_0_data"}},
		},
		proto.ToolWriteFile: {
			name: proto.ToolWriteFile,
			desc: "Create or overwrite a shared file. Everyone can read the new content from the next round on. If several writes hit the same path in one round, the last one wins.",
			params: []param{{"path", "string", "the file's path (key)", false, schemaStr},
				{"content", "any JSON value", "what to store (text, number, list or object)", false, schemaAny}},
			returns: `{"success": true, "path": "..."}`,
			example: [][2]string{{"path", "agent_0_data"}, {"content", "[914, 1000, 37]"}},
		},
		proto.ToolDelete: {
			name:    proto.ToolDelete,
			desc:    "Delete a shared file (from the next round on, nobody sees it).",
			params:  []param{{"path", "string", "the file's path (key)", false, schemaStr}},
			returns: `{"success": true, "path": "..."}`,
			example: [][2]string{{"path", "agent_0_data"}},
		},
		proto.ToolWait: {
			name:    proto.ToolWait,
			desc:    "End your turn for this round without submitting. Use it to let the others act; you continue next round.",
			returns: returnsEnd,
		},
		proto.ToolPropose: {
			name: proto.ToolPropose,
			desc: "Propose an answer to the whole team (consensus helper). From the next round on, every other agent is told of it, with its id, " +
				"and can vote on it; you count as agreeing. It submits nothing.",
			params:  []param{{"value", "any JSON value", "the proposed answer, in the format the task asks for", false, schemaAny}},
			returns: `{"success": true, "proposal_id": "r2-a0-s1"}`,
			example: [][2]string{{"value", "1000"}},
		},
		proto.ToolVote: {
			name: proto.ToolVote,
			desc: "Agree or disagree with a proposal made in an earlier round (consensus helper). From the next round on, the others are told of your vote; " +
				"voting again on the same proposal replaces your vote.",
			params: []param{{"proposal_id", "string", "the proposal's id, as you were told it", false, schemaStr},
				{"agree", "boolean", "true to agree (the default), false to disagree", true, schemaBool}},
			returns: `{"success": true, "proposal_id": "r2-a0-s1", "agree": true}`,
			example: [][2]string{{"proposal_id", "r2-a0-s1"}, {"agree", "true"}},
		},
		proto.ToolSubmit: {
			name:    proto.ToolSubmit,
			desc:    "Submit your final answer. It cannot be changed, and you take no further actions after it.",
			params:  []param{{"answer", "any JSON value", "your answer, in the format the task asks for", false, schemaAny}},
			returns: `{"status": "submitted"}`,
			example: [][2]string{{"answer", "1000"}},
		},
	}
	var out []toolSpec
	for _, name := range proto.ToolsWith(p, consensus) {
		out = append(out, byName[name])
	}
	return out
}

// toolsFor returns the tools offered to agent of a team of n over
// protocol p: all of specs(p, consensus), or for a single agent (n = 1,
// nobody to communicate with) only wait and submit_result, described
// without others. The store still executes the protocol's other tools.
func toolsFor(p proto.Protocol, n int, consensus bool) []toolSpec {
	all := specs(p, consensus)
	if n != 1 {
		return all
	}
	var out []toolSpec
	for _, s := range all {
		switch s.name {
		case proto.ToolWait:
			s.desc = "End your turn for this round without submitting; you continue next round."
			out = append(out, s)
		case proto.ToolSubmit:
			out = append(out, s)
		}
	}
	return out
}

func receiveDesc(p proto.Protocol) string {
	if p == proto.Broadcast {
		return "Fetch the broadcasts of the other agents that you have not fetched yet (those sent in earlier rounds)."
	}
	return "Fetch the messages sent to you in earlier rounds that you have not fetched yet. Each message is delivered once."
}

// xmlCall renders an example call in the published format.
func xmlCall(name string, args [][2]string) string {
	var b strings.Builder
	b.WriteString("<tool_call>\n<tool>" + name + "</tool>\n")
	if len(args) == 0 {
		b.WriteString("<parameters></parameters>\n</tool_call>")
		return b.String()
	}
	b.WriteString("<parameters>\n")
	for _, a := range args {
		fmt.Fprintf(&b, "<%s>%s</%s>\n", a[0], a[1], a[0])
	}
	b.WriteString("</parameters>\n</tool_call>")
	return b.String()
}

// functionTools returns the tools of a team of n over protocol p
// (toolsFor) for native function calling.
func functionTools(p proto.Protocol, n int, consensus bool) []llm.Tool {
	var out []llm.Tool
	for _, s := range toolsFor(p, n, consensus) {
		props := make([]string, 0, len(s.params))
		var req []string
		for _, pa := range s.params {
			sch := map[string]any{}
			_ = json.Unmarshal([]byte(pa.schema), &sch)
			sch["description"] = pa.desc
			b, _ := json.Marshal(sch)
			name, _ := json.Marshal(pa.name)
			props = append(props, string(name)+":"+string(b))
			if !pa.optional {
				req = append(req, pa.name)
			}
		}
		schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `}`
		if len(req) > 0 {
			r, _ := json.Marshal(req)
			schema += `,"required":` + string(r)
		}
		schema += `}`
		out = append(out, llm.Tool{Name: s.name, Description: s.desc + " Returns " + s.returns + ".", Parameters: json.RawMessage(schema)})
	}
	return out
}
