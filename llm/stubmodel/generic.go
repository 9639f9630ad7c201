package stubmodel

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
)

// Generic is the stub policy "generic": a model that knows no benchmark and
// gives a legal answer to any request from what the request itself
// carries:
//
//   - tools offered (and tool_choice not "none"): a call of one of them,
//     the one tool_choice names or one drawn from the tools, with arguments
//     that satisfy its parameters' JSON Schema (Instance). Under
//     tool_choice "auto" (or none given) a conversation whose last message
//     is a tool result gets an answer instead of another call, so that an
//     agent loop ends;
//   - else response_format json_schema: a JSON object (as the content)
//     that satisfies its schema; json_object: {"answer": "..."};
//   - else an option list in the last user message (two or more lines
//     "1. …", "2) …", "(a) …", "B: …", with consecutive labels): one label;
//   - else a short text, "stub reply" and eight hex digits.
//
// Every choice is drawn from a source seeded by seed and a hash of the
// request's messages, tools, tool_choice and response_format (not its
// model): the same request always gets the same answer, whatever the
// order of calls.
func Generic(seed int64) func(ChatRequest) Reply {
	return func(req ChatRequest) Reply { return genericReply(req, seed) }
}

// GenericPolicy is the stub policy generic (Generic, with the seed of its
// Options); its summary counts the requests.
func GenericPolicy() Policy {
	return Policy{Name: "generic", New: func(o Options) (http.Handler, func() string) {
		var n atomic.Int64
		g := Generic(o.Seed)
		h := Handler(func(req ChatRequest) Reply {
			n.Add(1)
			return g(req)
		})
		return h, func() string { return fmt.Sprintf("%d requests", n.Load()) }
	}}
}

func genericReply(req ChatRequest, seed int64) Reply {
	sum := requestHash(req)
	rng := rand.New(rand.NewPCG(sum, uint64(seed)))
	if t, ok := chosenTool(req, rng); ok {
		args := Instance(t.Parameters, rng)
		return Calls(ToolCall{Name: t.Name, Arguments: string(args)})
	}
	if v, ok := formatAnswer(req.ResponseFormat, rng); ok {
		return Text(string(v))
	}
	if labels := optionLabels(lastUser(req)); len(labels) > 1 {
		return Text(labels[rng.IntN(len(labels))])
	}
	return Text(shortText(rng))
}

func shortText(rng *rand.Rand) string { return fmt.Sprintf("stub reply %08x", rng.Uint32()) }

// requestHash is FNV-1a over what decides a generic answer.
func requestHash(req ChatRequest) uint64 {
	h := fnv.New64a()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, m := range req.Messages {
		put(m.Role)
		put(m.Content)
		put(m.ToolCallID)
		for _, c := range m.ToolCalls {
			put(c.Name)
			put(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		put(t.Name)
		put(string(t.Parameters))
	}
	put(string(req.ToolChoice))
	put(string(req.ResponseFormat))
	return h.Sum64()
}

// chosenTool is the tool a generic reply calls, if it calls one.
func chosenTool(req ChatRequest, rng *rand.Rand) (Tool, bool) {
	if len(req.Tools) == 0 {
		return Tool{}, false
	}
	var mode string
	if json.Unmarshal(req.ToolChoice, &mode) != nil {
		var f struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(req.ToolChoice, &f) == nil && f.Function.Name != "" {
			for _, t := range req.Tools {
				if t.Name == f.Function.Name {
					return t, true
				}
			}
		}
		mode = "auto"
	}
	switch mode {
	case "none":
		return Tool{}, false
	case "auto", "":
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
			return Tool{}, false // the tool has answered: answer in turn
		}
	}
	return req.Tools[rng.IntN(len(req.Tools))], true
}

// formatAnswer is the content a response_format asks for, if it asks for
// JSON.
func formatAnswer(format json.RawMessage, rng *rand.Rand) (json.RawMessage, bool) {
	if len(format) == 0 {
		return nil, false
	}
	var f struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(format, &f) != nil {
		return nil, false
	}
	switch f.Type {
	case "json_schema":
		return Instance(f.JSONSchema.Schema, rng), true
	case "json_object":
		b, _ := json.Marshal(map[string]string{"answer": shortText(rng)})
		return b, true
	}
	return nil, false
}

func lastUser(req ChatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// optionRE is one line of an option list: "1. …", "2) …", "(3) …",
// "[4] …", "a) …", "B: …".
var optionRE = regexp.MustCompile(`^\s*[(\[]?([0-9]{1,3}|[A-Za-z])[.):\]]\s+\S`)

// maxOptionText bounds the text searched for an option list.
const maxOptionText = 64 << 10

// optionLabels returns the labels of the first option list of text: two
// or more lines whose labels count up from 0, 1, a or A without a gap;
// nil if there is none.
func optionLabels(text string) []string {
	if len(text) > maxOptionText {
		text = text[:maxOptionText]
	}
	var labels []string
	for _, line := range strings.Split(text, "\n") {
		m := optionRE.FindStringSubmatch(line)
		if m == nil {
			if len(labels) > 1 {
				return labels
			}
			labels = nil
			continue
		}
		if len(labels) == 0 {
			if m[1] == "0" || m[1] == "1" || m[1] == "a" || m[1] == "A" {
				labels = []string{m[1]}
			}
			continue
		}
		if next(labels[len(labels)-1]) == m[1] {
			labels = append(labels, m[1])
		} else if len(labels) > 1 {
			return labels
		} else {
			labels = nil
		}
	}
	if len(labels) > 1 {
		return labels
	}
	return nil
}

// next is the label after l: 3 after 2, c after b.
func next(l string) string {
	var n int
	if _, err := fmt.Sscanf(l, "%d", &n); err == nil {
		return fmt.Sprint(n + 1)
	}
	return string(rune(l[0]) + 1)
}
