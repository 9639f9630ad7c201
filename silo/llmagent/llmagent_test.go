package llmagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

func call(name string, kv ...any) ToolCall {
	args := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i].(string)] = kv[i+1]
	}
	return ToolCall{Name: name, Args: args}
}

func TestParseToolCalls(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  []ToolCall
	}{
		{"one call", "I will send.\n<tool_call>\n<tool>send_message</tool>\n<parameters>\n<target_agent_id>1</target_agent_id>\n<content>hello there</content>\n</parameters>\n</tool_call>",
			[]ToolCall{call("send_message", "target_agent_id", int64(1), "content", "hello there")}},
		{"several in order", "<tool_call><tool>receive_messages</tool><parameters></parameters></tool_call> text <tool_call><tool>write_file</tool><parameters><path>a</path><content>x</content></parameters></tool_call><tool_call><tool>wait</tool></tool_call>",
			[]ToolCall{call("receive_messages"), call("write_file", "path", "a", "content", "x"), call("wait")}},
		{"missing tool skipped", "<tool_call><parameters><a>1</a></parameters></tool_call><tool_call><tool>wait</tool></tool_call>",
			[]ToolCall{call("wait")}},
		{"empty tool name skipped", "<tool_call><tool>  </tool></tool_call><tool_call><tool> list_agents </tool></tool_call>",
			[]ToolCall{call("list_agents")}},
		{"missing parameters", "<tool_call><tool>list_files</tool></tool_call>",
			[]ToolCall{call("list_files")}},
		{"unknown tags ignored", "<tool_call><note>hi</note><tool>read_file</tool><extra/><parameters><path>k</path>stray <b text<c>1</d></parameters></tool_call>",
			[]ToolCall{call("read_file", "path", "k")}},
		{"first tool and parameters win", "<tool_call><tool>a</tool><tool>b</tool><parameters><x>1</x></parameters><parameters><y>2</y></parameters></tool_call>",
			[]ToolCall{call("a", "x", int64(1))}},
		{"duplicate parameter last wins", "<tool_call><tool>t</tool><parameters><x>1</x><x>2</x></parameters></tool_call>",
			[]ToolCall{call("t", "x", int64(2))}},
		{"nested tags stay in value", "<tool_call><tool>submit_result</tool><parameters><answer><b>bold</b></answer></parameters></tool_call>",
			[]ToolCall{call("submit_result", "answer", "<b>bold</b>")}},
		{"non-greedy value", "<tool_call><tool>t</tool><parameters><a><a>x</a></a></parameters></tool_call>",
			[]ToolCall{call("t", "a", "<a>x")}},
		{"unclosed parameter skipped", "<tool_call><tool>t</tool><parameters><a>1<b>2</b></parameters></tool_call>",
			[]ToolCall{call("t", "b", int64(2))}},
		{"non-greedy block", "<tool_call><tool>a</tool></tool_call><tool>b</tool></tool_call>",
			[]ToolCall{call("a")}},
		{"unclosed block ignored", "<tool_call><tool>a</tool></tool_call><tool_call><tool>b</tool>",
			[]ToolCall{call("a")}},
		{"whitespace", "<tool_call>\n  <tool>\n\twrite_file \n</tool>\n  <parameters>\n    <path>  k1 </path>\n    <content>\n  multi\n  line\n</content>\n  </parameters>\n</tool_call>",
			[]ToolCall{call("write_file", "path", "k1", "content", "multi\n  line")}},
		{"unicode names", "<tool_call><tool>t</tool><parameters><clé_1>v</clé_1></parameters></tool_call>",
			[]ToolCall{call("t", "clé_1", "v")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseToolCalls(tc.reply)
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestParseToolCallsNone(t *testing.T) {
	for _, reply := range []string{
		"", "just text", "<tool>wait</tool>", "<tool_call><tool>wait</tool>",
		"<tool_call></tool_call>", "<tool_call><tool></tool></tool_call>",
		"<tool_call><tool>wait</tool_call></tool>", "\xff\xfe<tool_call>",
	} {
		got, err := ParseToolCalls(reply)
		if !errors.Is(err, ErrNoToolCall) || got != nil {
			t.Errorf("%q: got %v, %v; want ErrNoToolCall", reply, got, err)
		}
	}
}

func TestValueTyping(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"true", true}, {" FALSE ", false}, {"True", true}, {"truee", "truee"},
		{"42", int64(42)}, {"-7", int64(-7)}, {"+3", int64(3)}, {"007", int64(7)}, {"1_000", int64(1000)},
		{"1__0", "1__0"}, {"_1", "_1"}, {"1_", "1_"},
		{"1.50", 1.5}, {".5", 0.5}, {"5.", 5.0}, {"-2.5e3", -2500.0}, {"1e1_0", 1e10}, {"1_0.2_5", 10.25},
		{"inf", math.Inf(1)}, {"-Infinity", math.Inf(-1)}, {"1e999", math.Inf(1)},
		{".", "."}, {"e5", "e5"}, {"0x10", "0x10"}, {"1.2.3", "1.2.3"},
		{"{0: 1}", "{0: 1}"}, {"[(1, 2)]", "[(1, 2)]"}, {"[1] x", "[1] x"}, {"[1][2]", "[1][2]"},
		{" hello world ", "hello world"}, {"", ""}, {`"quoted"`, `"quoted"`}, {"null", "null"},
	}
	for _, tc := range tests {
		got := convert(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("convert(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
	// Big integers and JSON containers become pyvalue values, as json.loads
	// gives them (shown by their Python repr): order kept, floats stay floats.
	for in, repr := range map[string]string{
		"123456789012345678901234567890":   "123456789012345678901234567890",
		`[1, 2, 3]`:                        "[1, 2, 3]",
		`[1.50, 2e0, 1e999]`:               "[1.5, 2.0, inf]",
		`{"b": 1, "a": [true, null, "x"]}`: "{'b': 1, 'a': [True, None, 'x']}",
	} {
		if got := pyvalue.Repr(convert(in)); got != repr {
			t.Errorf("convert(%q) = %s, want %s", in, got, repr)
		}
	}
	if f, ok := convert("NaN").(float64); !ok || !math.IsNaN(f) {
		t.Errorf("convert(NaN) = %v", convert("NaN"))
	}
}

func TestArgsJSON(t *testing.T) {
	calls, err := ParseToolCalls("<tool_call><tool>write_file</tool><parameters><path>k<1></path><content>{\"a\": [1.50, 2]}</content><n>nan</n><i>-inf</i><b>TRUE</b><big>99999999999999999999</big><f>1.50</f><e>1e3</e><d>{\"z\": [0.1, NaN], \"y\": -0.0}</d></parameters></tool_call>")
	if err != nil {
		t.Fatal(err)
	}
	got, err := calls[0].ArgsJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":true,"big":99999999999999999999,"content":{"a":[1.5,2]},"d":{"z":[0.1,"nan"],"y":-0.0},"e":1000.0,"f":1.5,"i":"-inf","n":"nan","path":"k<1>"}`
	if string(got) != want {
		t.Fatalf("ArgsJSON = %s, want %s", got, want)
	}
	empty, err := ToolCall{Name: "wait"}.ArgsJSON()
	if err != nil || string(empty) != "{}" {
		t.Fatalf("empty ArgsJSON = %s, %v", empty, err)
	}
}

func TestFormatToolResult(t *testing.T) {
	for _, e := range []ResultEncoding{ResultsPublished, ResultsCompact} {
		got := FormatToolResult("wait", json.RawMessage("{ \"status\" : \"waiting\" }\n"), e)
		want := "<tool_result>\n<tool>wait</tool>\n<result>{\"status\":\"waiting\"}</result>\n</tool_result>"
		if got != want {
			t.Fatalf("%s: got %q, want %q", e, got, want)
		}
		if got := FormatToolResult("x", nil, e); !strings.Contains(got, "<result>null</result>") {
			t.Fatalf("%s: nil result: %q", e, got)
		}
	}
	// A read_file hit with non-ASCII text and floats: the published
	// encoder (srsly.json_dumps, ujson) escapes the text and writes the
	// floats its own way; compact keeps today's UTF-8 and Go's numbers.
	res := json.RawMessage(`{"success":true,"content":{"naïve→":[1.0,1e-05,0.1]},"metadata":{"modified_by":0,"modified_at_round":2}}`)
	pub := `{"success":true,"content":{"na\u00efve\u2192":[1.0,1e-5,0.1]},"metadata":{"modified_by":0,"modified_at_round":2}}`
	if got := ResultsPublished.Encode(res); got != pub {
		t.Errorf("published: %s, want %s", got, pub)
	}
	if got := ResultsCompact.Encode(res); got != string(res) {
		t.Errorf("compact: %s, want %s", got, res)
	}
	if e, err := ParseResultEncoding(""); err != nil || e != ResultsPublished {
		t.Errorf(`ParseResultEncoding("") = %q, %v`, e, err)
	}
	if _, err := ParseResultEncoding("utf8"); err == nil {
		t.Error("an unknown encoding was accepted")
	}
	if got := JoinToolResults([]string{"a", "b"}); got != "a\n\nb" {
		t.Fatalf("join: %q", got)
	}
}

func TestNoCallFeedback(t *testing.T) {
	fb := NoCallFeedback()
	calls, err := ParseToolCalls(fb)
	if err != nil || len(calls) != 1 || calls[0].Name != "TOOL_NAME" {
		t.Fatalf("feedback shape does not parse as one call: %v %v", calls, err)
	}
	if !strings.Contains(fb, "No valid tool call") {
		t.Fatalf("feedback: %q", fb)
	}
}

func FuzzParseToolCalls(f *testing.F) {
	for _, s := range []string{
		"", "<tool_call><tool>wait</tool></tool_call>",
		"<tool_call><tool>t</tool><parameters><a>1.5</a><b>[1,{\"x\":2}]</b><c>nan</c></parameters></tool_call>",
		"<tool_call><tool>t</tool><parameters><a><a></a></parameters></tool_call>",
		"<tool_call><tool>\xff</tool><parameters><\xff>1</\xff></parameters></tool_call>",
		NoCallFeedback(),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := ParseToolCalls(s)
		if err != nil {
			if !errors.Is(err, ErrNoToolCall) || calls != nil {
				t.Fatalf("bad failure: %v %v", calls, err)
			}
			return
		}
		if len(calls) == 0 {
			t.Fatal("no calls and no error")
		}
		for _, c := range calls {
			if c.Name == "" || c.Args == nil {
				t.Fatalf("bad call %#v", c)
			}
			raw, err := c.ArgsJSON()
			if err != nil || !json.Valid(raw) {
				t.Fatalf("ArgsJSON: %s %v", raw, err)
			}
			_ = FormatToolResult(c.Name, raw, ResultsPublished)
		}
	})
}

// scanParamsPlain is the direct reading of the published regex
// <(\w+)>(.*?)</\1>: find each opening tag, then the first matching closing
// tag after it (quadratic on adversarial input; the reference for
// scanParams).
func scanParamsPlain(s string, args map[string]any) {
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			return
		}
		i += k
		n := wordEnd(s, i+1)
		if n == i+1 || n >= len(s) || s[n] != '>' {
			i++
			continue
		}
		name := s[i+1 : n]
		e := strings.Index(s[n+1:], "</"+name+">")
		if e < 0 {
			i++
			continue
		}
		args[name] = convert(s[n+1 : n+1+e])
		i = n + 1 + e + len(name) + 3
	}
}

// FuzzScanParams: the indexed scan agrees with the plain one.
func FuzzScanParams(f *testing.F) {
	for _, s := range []string{"<a>1</a>", "<a><b>2</b></a><a>3</a>", "<a>x</b></a>", "</</a><a>1</</a>", "<é>1</é><_>2</_>", "<a><a></a></a>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := map[string]any{}, map[string]any{}
		scanParams(s, got)
		scanParamsPlain(s, want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: indexed %v, plain %v", s, got, want)
		}
	})
}

// TestScanParamsLinear: a reply full of unclosed tags parses at once (the
// plain scan takes seconds on it); no timing is asserted, the test would
// simply hang on a quadratic scan.
func TestScanParamsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("<tool_call><tool>x</tool><parameters>")
	for i := range 50000 {
		fmt.Fprintf(&b, "<a%d>", i)
	}
	b.WriteString("<ok>1</ok></parameters></tool_call>")
	calls, err := ParseToolCalls(b.String())
	if err != nil || len(calls) != 1 || calls[0].Args["ok"] != int64(1) || len(calls[0].Args) != 1 {
		t.Fatalf("%v %v", calls, err)
	}
}
