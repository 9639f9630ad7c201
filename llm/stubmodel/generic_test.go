package stubmodel_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/coordbench/coordbench/llm/stubmodel"
)

// schemas are JSON Schemas of the shapes tools and response formats use.
var schemas = []string{
	`{"type":"object","properties":{"index":{"type":"integer","enum":[2,5,9]}},"required":["index"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":"integer","minimum":10,"maximum":12},"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":0.5},
	  "k":{"type":"integer","multipleOf":7,"minimum":20},"s":{"type":"string","minLength":12,"maxLength":14},"b":{"type":"boolean"},
	  "c":{"const":"fixed"},"when":{"type":"string","format":"date-time"},"maybe":{"type":["null","string"]}},"required":["n","x","k","s","b","c"]}`,
	`{"type":"object","properties":{"items":{"type":"array","minItems":3,"maxItems":4,"uniqueItems":true,"items":{"type":"integer","minimum":0,"maximum":9}},
	  "pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2},
	  "nested":{"type":"object","properties":{"deep":{"type":"object","properties":{"v":{"enum":["a","b"]}},"required":["v"]}},"required":["deep"]}},
	  "required":["items","pair","nested"]}`,
	`{"$defs":{"Step":{"type":"object","properties":{"id":{"type":"integer","minimum":1},"next":{"anyOf":[{"$ref":"#/$defs/Step"},{"type":"null"}]}},"required":["id","next"]}},
	  "type":"object","properties":{"plan":{"$ref":"#/$defs/Step"},"choice":{"oneOf":[{"type":"string","enum":["left","right"]},{"type":"integer"}]},
	  "merged":{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]}},
	  "required":["plan","choice","merged"]}`,
	`{"type":"object","additionalProperties":{"type":"integer","maximum":-3},"minProperties":2}`,
	`{"type":"object","properties":{"x":{"type":"number","multipleOf":0.25,"minimum":1.1}},"required":["x"]}`,
}

func compile(t *testing.T, s string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// Instance builds values that a real validator accepts, for many seeds,
// and the same value for the same seed.
func TestInstanceSatisfiesSchemas(t *testing.T) {
	for i, s := range schemas {
		sch := compile(t, s)
		seen := map[string]bool{}
		for seed := range uint64(40) {
			v := stubmodel.Instance(json.RawMessage(s), rand.New(rand.NewPCG(seed, 1)))
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
			if err != nil {
				t.Fatalf("schema %d: %s is not JSON: %v", i, v, err)
			}
			if err := sch.Validate(doc); err != nil {
				t.Fatalf("schema %d, seed %d: %s fails: %v", i, seed, v, err)
			}
			again := stubmodel.Instance(json.RawMessage(s), rand.New(rand.NewPCG(seed, 1)))
			if !bytes.Equal(v, again) {
				t.Fatalf("schema %d: not deterministic: %s / %s", i, v, again)
			}
			seen[string(v)] = true
		}
		t.Logf("schema %d: %d distinct instances", i, len(seen))
	}
	// A recursive schema without a way out is cut at the depth bound, and
	// an unparsable one gives an empty object: no panic, no endless loop.
	loop := `{"$defs":{"A":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"required":["a"]}},"$ref":"#/$defs/A"}`
	if v := stubmodel.Instance(json.RawMessage(loop), rand.New(rand.NewPCG(1, 1))); len(v) == 0 || len(v) > 4096 {
		t.Errorf("recursive schema: %s", v)
	}
	if v := stubmodel.Instance(json.RawMessage(`{`), rand.New(rand.NewPCG(1, 1))); string(v) != "{}" {
		t.Errorf("bad schema: %s", v)
	}
	big := `{"type":"array","minItems":100000,"items":{"type":"array","minItems":100000,"items":{"type":"string"}}}`
	if v := stubmodel.Instance(json.RawMessage(big), rand.New(rand.NewPCG(1, 1))); len(v) > 1<<20 {
		t.Errorf("unbounded instance: %d bytes", len(v))
	}
}

func chat(msgs ...stubmodel.Message) stubmodel.ChatRequest {
	return stubmodel.ChatRequest{Messages: msgs}
}

func userMsg(s string) stubmodel.Message { return stubmodel.Message{Role: "user", Content: s} }

// The generic policy: a tool call with arguments that satisfy the tool's
// schema (the named tool under a forced tool_choice), an answer after a
// tool result under auto, a JSON object for response_format, a label of an
// option list, else a short text; the same request always gets the same
// answer, another seed may give another.
func TestGeneric(t *testing.T) {
	g := stubmodel.Generic(0)
	tools := []stubmodel.Tool{
		{Name: "a", Parameters: json.RawMessage(schemas[0])},
		{Name: "b", Parameters: json.RawMessage(schemas[1])},
	}
	req := chat(userMsg("go"))
	req.Tools = tools
	names := map[string]bool{}
	for i := range 20 {
		req.Messages[0].Content = fmt.Sprint("go ", i)
		r := g(req)
		if len(r.ToolCalls) != 1 {
			t.Fatalf("no tool call: %+v", r)
		}
		c := r.ToolCalls[0]
		names[c.Name] = true
		sch := compile(t, schemas[map[string]int{"a": 0, "b": 1}[c.Name]])
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Arguments))
		if err != nil || sch.Validate(doc) != nil {
			t.Errorf("arguments %s of %s: %v", c.Arguments, c.Name, err)
		}
		if again := g(req); again.ToolCalls[0].Arguments != c.Arguments || again.ToolCalls[0].Name != c.Name {
			t.Errorf("not deterministic: %+v / %+v", r, again)
		}
	}
	if !names["a"] || !names["b"] {
		t.Errorf("tools called: %v, want both over 20 requests", names)
	}
	req.ToolChoice = json.RawMessage(`{"type":"function","function":{"name":"b"}}`)
	if r := g(req); r.ToolCalls[0].Name != "b" {
		t.Errorf("forced tool: %+v", r)
	}
	req.ToolChoice = json.RawMessage(`"none"`)
	if r := g(req); len(r.ToolCalls) != 0 || !strings.HasPrefix(r.Content, "stub reply ") {
		t.Errorf("tool_choice none: %+v", r)
	}
	req.ToolChoice = nil
	req.Messages = append(req.Messages, stubmodel.Message{Role: "tool", Content: "42", ToolCallID: "call_1"})
	if r := g(req); len(r.ToolCalls) != 0 {
		t.Errorf("after a tool result under auto: %+v", r)
	}
	req.ToolChoice = json.RawMessage(`"required"`)
	if r := g(req); len(r.ToolCalls) != 1 {
		t.Errorf("after a tool result under required: %+v", r)
	}

	f := chat(userMsg("answer"))
	f.ResponseFormat = json.RawMessage(`{"type":"json_schema","json_schema":{"name":"x","schema":` + schemas[2] + `}}`)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(g(f).Content))
	if err != nil || compile(t, schemas[2]).Validate(doc) != nil {
		t.Errorf("response_format json_schema: %q %v", g(f).Content, err)
	}
	f.ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
	var obj map[string]any
	if err := json.Unmarshal([]byte(g(f).Content), &obj); err != nil || obj["answer"] == nil {
		t.Errorf("json_object: %q", g(f).Content)
	}

	labels := map[string]bool{}
	for i := range 30 {
		r := g(chat(userMsg(fmt.Sprintf("Pick one (%d):\n1. red\n2. green\n3) blue\nAnswer with the number.", i))))
		labels[r.Content] = true
	}
	if len(labels) != 3 || !labels["1"] || !labels["2"] || !labels["3"] {
		t.Errorf("option labels answered: %v", labels)
	}
	if r := g(chat(userMsg("A) yes\nB) no"))); r.Content != "A" && r.Content != "B" {
		t.Errorf("lettered options: %q", r.Content)
	}
	for _, text := range []string{"1. only one option", "2. two\n3. three", "hello"} {
		if r := g(chat(userMsg(text))); !strings.HasPrefix(r.Content, "stub reply ") {
			t.Errorf("%q: %q, want a short text", text, r.Content)
		}
	}
	diff := 0
	for i := range 20 {
		q := chat(userMsg(fmt.Sprint("q", i)))
		if g(q).Content != stubmodel.Generic(7)(q).Content {
			diff++
		}
	}
	if diff == 0 {
		t.Error("the seed changes no answer")
	}
}
