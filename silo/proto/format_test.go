package proto

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// formatCases: a content value as a tool call carries it (JSON), what
// Python's str() makes of it (the published conversion), what FormatJSON
// delivers, and what write_file stores under FormatStr (json.dumps of the
// typed value, compact).
var formatCases = []struct {
	name, in, str, json, file string
}{
	{"string", `"hi there"`, "hi there", "hi there", `"hi there"`},
	{"string holding JSON", `"[1,2]"`, "[1,2]", "[1,2]", `"[1,2]"`},
	{"list", `[1, 2, 3]`, "[1, 2, 3]", "[1,2,3]", "[1,2,3]"},
	{"dict", `{"a": 1}`, "{'a': 1}", `{"a":1}`, `{"a":1}`},
	{"dict order kept", `{"b":1,"a":[true,null]}`, "{'b': 1, 'a': [True, None]}", `{"b":1,"a":[true,null]}`, `{"b":1,"a":[true,null]}`},
	{"nested", `{"x":[[1,2],{"y":"z"}]}`, "{'x': [[1, 2], {'y': 'z'}]}", `{"x":[[1,2],{"y":"z"}]}`, `{"x":[[1,2],{"y":"z"}]}`},
	{"true", `true`, "True", "true", "true"},
	{"false", `false`, "False", "false", "false"},
	{"null", `null`, "None", "null", "null"},
	{"int", `42`, "42", "42", "42"},
	{"negative int", `-7`, "-7", "-7", "-7"},
	{"large int", `123456789012345678901234567890`, "123456789012345678901234567890", "123456789012345678901234567890", "123456789012345678901234567890"},
	{"1e3", `1e3`, "1000.0", "1e3", "1000.0"},
	{"1.0", `1.0`, "1.0", "1.0", "1.0"},
	{"0.1", `0.1`, "0.1", "0.1", "0.1"},
	{"-0.0", `-0.0`, "-0.0", "-0.0", "-0.0"},
	{"1e-7", `1e-7`, "1e-07", "1e-7", "1e-07"},
	{"1e16", `1e16`, "1e+16", "1e16", "1e+16"},
	{"float in list", `[53.60, 2.5e2]`, "[53.6, 250.0]", "[53.60,2.5e2]", "[53.6,250.0]"},
	{"unicode", `["é→", "it's", "say \"x\""]`, `['é→', "it's", 'say "x"']`, `["é→","it's","say \"x\""]`, `["é→","it's","say \"x\""]`},
	{"html characters", `["x < y & z"]`, "['x < y & z']", `["x < y & z"]`, `["x < y & z"]`},
}

func TestMessageFormatConversions(t *testing.T) {
	for _, c := range formatCases {
		got, err := messageText(json.RawMessage(c.in), FormatStr)
		if err != nil || got != c.str {
			t.Errorf("%s: str: got %q, %v; want %q", c.name, got, err, c.str)
		}
		got, err = messageText(json.RawMessage(c.in), FormatJSON)
		if err != nil || got != c.json {
			t.Errorf("%s: json: got %q, %v; want %q", c.name, got, err, c.json)
		}
		file, err := fileContent(json.RawMessage(c.in), FormatStr)
		if err != nil || string(file) != c.file {
			t.Errorf("%s: file: got %s, %v; want %s", c.name, file, err, c.file)
		}
		file, err = fileContent(json.RawMessage(c.in), FormatJSON)
		if err != nil || string(file) != c.json && c.in[0] != '"' {
			t.Errorf("%s: file (json): got %s, %v; want %s", c.name, file, err, c.json)
		}
	}
	for _, s := range []string{"", "str", "json"} {
		if _, err := ParseMessageFormat(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseMessageFormat("repr"); err == nil {
		t.Error("repr accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "run.db"), P2P, 2, Options{MessageFormat: "yaml"}); err == nil {
		t.Error("Open accepted message format yaml")
	}
}

// TestMessageFormatProtocols sends the same values through every protocol
// under both formats and checks what the receiving agent reads: message
// and broadcast texts, sfs paths (as list_files shows them) and contents.
func TestMessageFormatProtocols(t *testing.T) {
	values := []string{`[1, 2, 3]`, `{"a": 1}`, `true`, `1e3`, `"plain"`}
	paths := []struct{ in, str, json string }{
		{`"p"`, "p", "p"}, {`1`, "1", "1"}, {`true`, "True", "true"}, {`1.5`, "1.5", "1.5"},
		{`1e3`, "1000.0", "1e3"}, {`[1,2]`, "[1, 2]", ""}, {`null`, "None", ""},
	}
	for _, f := range []MessageFormat{FormatStr, FormatJSON} {
		want := func(in string) string {
			for _, c := range formatCases {
				if c.in == in {
					if f == FormatStr {
						return c.str
					}
					return c.json
				}
			}
			var s string
			json.Unmarshal([]byte(in), &s)
			return s
		}
		openF := func(p Protocol) *Store {
			s, err := Open(filepath.Join(t.TempDir(), "run.db"), p, 2, Options{MessageFormat: f})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if s.MessageFormat() != f {
				t.Fatalf("MessageFormat() = %q", s.MessageFormat())
			}
			return s
		}
		for _, p := range []Protocol{P2P, Broadcast} {
			s := openF(p)
			begin(t, s, 1)
			for _, v := range values {
				args := `{"target_id":1,"content":` + v + `}`
				tool := ToolSend
				if p == Broadcast {
					args, tool = `{"content":`+v+`}`, ToolBroadcast
				}
				if r := call(t, s, 0, tool, args); r["success"] != true {
					t.Fatalf("%s %s: %v", f, p, r)
				}
			}
			end(t, s)
			begin(t, s, 2)
			got := receive(t, s, 1)
			if len(got) != len(values) {
				t.Fatalf("%s %s: %d messages", f, p, len(got))
			}
			for k, v := range values {
				if got[k].Content != want(v) {
					t.Errorf("%s %s: %s arrived as %q, want %q", f, p, v, got[k].Content, want(v))
				}
			}
			end(t, s)
		}

		s := openF(SFS)
		begin(t, s, 1)
		for k, v := range values {
			call(t, s, 0, ToolWriteFile, `{"path":"v`+string(rune('0'+k))+`","content":`+v+`}`)
		}
		for _, p := range paths {
			r := call(t, s, 0, ToolWriteFile, `{"path":`+p.in+`,"content":0}`)
			wantPath := p.str
			if f == FormatJSON {
				wantPath = p.json
			}
			if wantPath == "" {
				if _, ok := r["error"]; !ok {
					t.Errorf("%s: path %s accepted: %v", f, p.in, r)
				}
			} else if r["path"] != wantPath {
				t.Errorf("%s: path %s stored as %v, want %q", f, p.in, r["path"], wantPath)
			}
		}
		end(t, s)
		begin(t, s, 2)
		for k, v := range values {
			res, _ := s.Call(1, ToolReadFile, json.RawMessage(`{"path":"v`+string(rune('0'+k))+`"}`))
			var hit struct{ Content json.RawMessage }
			if err := json.Unmarshal(res, &hit); err != nil {
				t.Fatal(err)
			}
			wantFile := ""
			for _, c := range formatCases {
				if c.in == v {
					wantFile = c.file
					if f == FormatJSON {
						wantFile = string(mustCompact(t, v))
					}
				}
			}
			if wantFile == "" {
				wantFile = v
			}
			if string(hit.Content) != wantFile {
				t.Errorf("%s: file content %s read back as %s, want %s", f, v, hit.Content, wantFile)
			}
		}
		var listed struct {
			Files []struct{ Path string } `json:"files"`
		}
		res, _ := s.Call(1, ToolListFiles, nil)
		if err := json.Unmarshal(res, &listed); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, fi := range listed.Files[len(values):] {
			got = append(got, fi.Path)
		}
		var wantPaths []string
		for _, p := range paths {
			w := p.str
			if f == FormatJSON {
				w = p.json
			}
			if w != "" {
				wantPaths = append(wantPaths, w)
			}
		}
		if len(got) != len(wantPaths) {
			t.Fatalf("%s: listed %v, want %v", f, got, wantPaths)
		}
		for k := range got {
			if got[k] != wantPaths[k] {
				t.Errorf("%s: listed %v, want %v", f, got, wantPaths)
			}
		}
		end(t, s)
	}
}

func mustCompact(t *testing.T, v string) []byte {
	t.Helper()
	b, err := fileContent(json.RawMessage(v), FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDeliveries: every content an agent reads is kept in reading order
// with its author and the author's provenance set, as the agent read it.
func TestDeliveries(t *testing.T) {
	s := open(t, P2P, 3)
	begin(t, s, 1)
	call(t, s, 1, ToolSend, `{"target_id":2,"content":[1,2]}`)
	call(t, s, 0, ToolSend, `{"target_id":2,"content":"hi"}`)
	end(t, s)
	begin(t, s, 2)
	receive(t, s, 2)
	call(t, s, 2, ToolSend, `{"target_id":0,"content":"relay"}`)
	end(t, s)
	begin(t, s, 3)
	receive(t, s, 0)
	end(t, s)
	got := s.Deliveries(2)
	if len(got) != 2 || got[0].Text != "hi" || got[0].From != 0 || got[1].Text != "[1, 2]" || got[1].From != 1 ||
		got[1].Round != 2 || got[1].Tool != ToolReceive || len(got[1].Seen) != 1 || got[1].Seen[0] != 1 {
		t.Fatalf("agent 2 read %+v", got)
	}
	if got := s.Deliveries(0); len(got) != 1 || got[0].Text != "relay" || len(got[0].Seen) != 3 {
		t.Fatalf("agent 0 read %+v", got)
	}
	if s.Deliveries(1) == nil || len(s.Deliveries(1)) != 0 || s.Deliveries(7) != nil {
		t.Fatal("agent 1 read something, or agent 7 exists")
	}

	f := open(t, SFS, 2)
	begin(t, f, 1)
	call(t, f, 0, ToolWriteFile, `{"path":"a","content":{"x":1e3}}`)
	call(t, f, 0, ToolWriteFile, `{"path":"b","content":"text"}`)
	end(t, f)
	begin(t, f, 2)
	call(t, f, 1, ToolReadFile, `{"path":"a"}`)
	call(t, f, 1, ToolReadFile, `{"path":"b"}`)
	call(t, f, 1, ToolReadFile, `{"path":"missing"}`)
	end(t, f)
	got = f.Deliveries(1)
	if len(got) != 2 || got[0].Text != `{"x":1000.0}` || got[0].Tool != ToolReadFile || got[1].Text != "text" || got[1].From != 0 {
		t.Fatalf("sfs reads %+v", got)
	}
}
