package stubmodel

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The fast paths of decode agree with the plain encoding/json and strings
// versions they replace.
func TestDecodeFastPaths(t *testing.T) {
	for _, s := range []string{"", " ", "a", " two  words\t", "ünï côdé\u00a0split\u2003here", "x\n\ny", "\u0085a\u0085"} {
		if got, want := words(s), int64(len(strings.Fields(s))); got != want {
			t.Errorf("words(%q) = %d, want %d", s, got, want)
		}
	}
	for _, body := range []string{
		`{}`,
		`{"model":"m","messages":[{"role":"user","content":"a \"quoted\": key"}],"temperature":0}`,
		` { "a\"b" : {"model": 1, "x": [ "}" , {"y": "]"} ]}, "c\\\\" :"d:", "tools" : [] } `,
	} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		var want []string
		for k := range m {
			want = append(want, k)
		}
		sort.Strings(want)
		if got := topLevelKeys([]byte(body)); !slices.Equal(got, want) {
			t.Errorf("topLevelKeys(%s) = %q, want %q", body, got, want)
		}
	}
	for _, raw := range []string{`"plain"`, `"esc\n\"aped\""`, `"\u00e9"`, `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`} {
		var v any
		json.Unmarshal([]byte(raw), &v)
		got, err := messageText(v)
		var want string
		if json.Unmarshal([]byte(raw), &want) != nil {
			want = "ab"
		}
		if err != nil || got != want {
			t.Errorf("messageText(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
}
