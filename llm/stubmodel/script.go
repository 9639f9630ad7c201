package stubmodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"
)

// Bounds of a script file.
const (
	MaxScriptBytes   = 1 << 20
	MaxScriptEntries = 1000
	maxScriptRegexp  = 1 << 10
)

// Script is a list of scripted replies (coordbench llm stub --script
// FILE): the first entry that matches a request answers it. An entry
// matches when every condition it has holds: Contains, a substring of the
// last user message; Regexp, an RE2 expression found in it; Call, the
// 0-based index of the request among those the stub has received (arrival
// order, so with concurrent callers only the first is certain). An entry
// without conditions matches every request. Its reply is Reply (the
// content) and ToolCalls (native function calls), one of them at least.
type Script struct {
	Entries []ScriptEntry
}

// ScriptEntry is one entry of a Script. Line is where it starts in its
// file.
type ScriptEntry struct {
	Contains  string       `yaml:"contains" json:"contains"`
	Regexp    string       `yaml:"regexp" json:"regexp"`
	Call      *int         `yaml:"call" json:"call"`
	Reply     string       `yaml:"reply" json:"reply"`
	ToolCalls []ScriptCall `yaml:"tool_calls" json:"tool_calls"`
	Line      int          `yaml:"-" json:"-"`

	re *regexp.Regexp
}

// ScriptCall is one tool call of a scripted reply: the function's name and
// its arguments, a JSON object (or a string, sent verbatim).
type ScriptCall struct {
	Name      string `yaml:"name" json:"name"`
	Arguments any    `yaml:"arguments" json:"arguments"`
}

// LoadScript reads a script file: JSON Lines (.jsonl, .ndjson: one entry
// per line, blank lines and lines starting with # skipped) or YAML (any
// other name, JSON included: a list of entries). Errors name the file and
// line.
func LoadScript(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxScriptBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxScriptBytes {
		return nil, fmt.Errorf("%s: longer than %d bytes", path, MaxScriptBytes)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return parseScriptJSONL(path, data)
	}
	return parseScriptYAML(path, data)
}

// ParseScript reads a script from data, in YAML (a list of entries) or, if
// jsonl, JSON Lines; name labels errors.
func ParseScript(name string, data []byte, jsonl bool) (*Script, error) {
	if len(data) > MaxScriptBytes {
		return nil, fmt.Errorf("%s: longer than %d bytes", name, MaxScriptBytes)
	}
	if jsonl {
		return parseScriptJSONL(name, data)
	}
	return parseScriptYAML(name, data)
}

var scriptKeys = []string{"contains", "regexp", "call", "reply", "tool_calls"}

func parseScriptYAML(name string, data []byte) (*Script, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	s := &Script{}
	if len(root.Content) == 0 {
		return s, nil
	}
	list := root.Content[0]
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: want a list of entries (- contains: …, reply: …)", name, list.Line)
	}
	for _, n := range list.Content {
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: an entry must be a mapping (contains, regexp, call, reply, tool_calls)", name, n.Line)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; !slices.Contains(scriptKeys, k) {
				return nil, fmt.Errorf("%s:%d: unknown key %q (want %s)", name, n.Content[i].Line, k, strings.Join(scriptKeys, ", "))
			}
		}
		var e ScriptEntry
		if err := n.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n.Line, err)
		}
		e.Line = n.Line
		if err := s.add(name, e); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func parseScriptJSONL(name string, data []byte) (*Script, error) {
	s := &Script{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), MaxScriptBytes+1)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		d := json.NewDecoder(strings.NewReader(t))
		d.DisallowUnknownFields()
		var e ScriptEntry
		if err := d.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		e.Line = line
		if err := s.add(name, e); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return s, nil
}

// add checks e and appends it.
func (s *Script) add(name string, e ScriptEntry) error {
	at := fmt.Sprintf("%s:%d", name, e.Line)
	if len(s.Entries) >= MaxScriptEntries {
		return fmt.Errorf("%s: more than %d entries", at, MaxScriptEntries)
	}
	if e.Reply == "" && len(e.ToolCalls) == 0 {
		return fmt.Errorf("%s: an entry needs a reply or tool_calls", at)
	}
	if e.Call != nil && *e.Call < 0 {
		return fmt.Errorf("%s: call %d: want a request index from 0", at, *e.Call)
	}
	if e.Regexp != "" {
		if len(e.Regexp) > maxScriptRegexp {
			return fmt.Errorf("%s: regexp longer than %d bytes", at, maxScriptRegexp)
		}
		re, err := regexp.Compile(e.Regexp)
		if err != nil {
			return fmt.Errorf("%s: regexp: %v", at, err)
		}
		e.re = re
	}
	for i, c := range e.ToolCalls {
		if strings.TrimSpace(c.Name) == "" {
			return fmt.Errorf("%s: tool_calls[%d]: name is empty", at, i)
		}
		if _, err := callArguments(c.Arguments); err != nil {
			return fmt.Errorf("%s: tool_calls[%d] (%s): arguments: %v", at, i, c.Name, err)
		}
	}
	s.Entries = append(s.Entries, e)
	return nil
}

// callArguments is a call's arguments as the text sent: a string
// verbatim, a missing value as {}, anything else as its JSON.
func callArguments(v any) (string, error) {
	switch a := v.(type) {
	case nil:
		return "{}", nil
	case string:
		return a, nil
	case map[string]any:
		b, err := json.Marshal(a)
		return string(b), err
	}
	return "", fmt.Errorf("want an object (or a string holding JSON), got %T", v)
}

// Reply returns the reply of the first entry that matches req, the
// request number call at this stub.
func (s *Script) Reply(req ChatRequest, call int) (Reply, bool) {
	last := lastUser(req)
	for _, e := range s.Entries {
		if (e.Contains != "" && !strings.Contains(last, e.Contains)) ||
			(e.re != nil && !e.re.MatchString(last)) ||
			(e.Call != nil && *e.Call != call) {
			continue
		}
		r := Reply{Content: e.Reply}
		for _, c := range e.ToolCalls {
			args, _ := callArguments(c.Arguments) // checked by add
			r.ToolCalls = append(r.ToolCalls, ToolCall{Name: c.Name, Arguments: args})
		}
		return r, true
	}
	return Reply{}, false
}

// Wrap returns a handler that answers the requests an entry matches and
// passes the others, untouched, to h, and the number of requests it has
// answered from the script.
func (s *Script) Wrap(h http.Handler) (http.Handler, func() int64) {
	var seq, scripted atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			writeError(w, http.StatusBadRequest, "reading body: "+err.Error(), "")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		req := decode(r, time.Time{})
		call := int(seq.Add(1) - 1)
		if req.DecodeError == "" {
			if reply, ok := s.Reply(req, call); ok {
				scripted.Add(1)
				req.Seq = call
				out, _ := completionBody(req, reply)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(out)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}), scripted.Load
}
