package task

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// semantic decodes JSON with exact numbers.
func semantic(t *testing.T, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// TestParsePyLiteralShards: every task's shard text, parsed back, is the
// stored JSON shard. String shards are shown without quotes (str()); their
// repr() is parsed instead.
func TestParsePyLiteralShards(t *testing.T) {
	for _, tk := range All() {
		for _, n := range []int{1, 2, 5} {
			in, err := Seeded(tk.ID, n, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				text := in.ShardText(i)
				if s, ok := in.typedShard(i).(string); ok {
					if text != s {
						t.Fatalf("%s n=%d agent %d: str() of a string shard is not the string", tk.ID, n, i)
					}
					text = pyRepr(s)
				}
				got, err := ParsePyLiteral(text)
				if err != nil {
					t.Fatalf("%s n=%d agent %d: %v\n%s", tk.ID, n, i, err, text)
				}
				if !reflect.DeepEqual(semantic(t, got), semantic(t, in.Shards[i])) {
					t.Fatalf("%s n=%d agent %d:\n got %s\nwant %s", tk.ID, n, i, got, in.Shards[i])
				}
				if !bytes.Equal(got, in.Shards[i]) {
					t.Errorf("%s n=%d agent %d: not byte-identical:\n got %s\nwant %s", tk.ID, n, i, got, in.Shards[i])
				}
			}
		}
	}
}

func TestParsePyLiteralParams(t *testing.T) {
	in, err := Seeded("III-25", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePyLiteral(pyStr(in.params))
	if err != nil || !bytes.Equal(got, in.Params) {
		t.Fatalf("params: %s, %v; want %s", got, err, in.Params)
	}
}

func TestParsePyLiteral(t *testing.T) {
	ok := []struct{ in, want string }{
		{"0", "0"},
		{"-17", "-17"},
		{"+5", "5"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"-123456789012345678901234567890", "-123456789012345678901234567890"},
		{"1_000", "1000"},
		{"0.5", "0.5"},
		{"-0.0", "-0.0"},
		{"1e-05", "1e-05"},
		{"1.5e+16", "1.5e+16"},
		{"1E3", "1000.0"},
		{"3.", "3.0"},
		{".25", "0.25"},
		{"0.1", "0.1"},
		{"1e400", "Infinity"},
		{"inf", "Infinity"},
		{"-inf", "-Infinity"},
		{"nan", "NaN"},
		{"True", "true"},
		{"False", "false"},
		{"None", "null"},
		{"'a'", `"a"`},
		{`"it's"`, `"it's"`},
		{`'a\'b\\c\nd\te\x41\u00e9\U0001F600\0\101'`, `"a'b\\c\nd\teAé😀\u0000A"`},
		{`'\q'`, `"\\q"`},
		{`'é "q"'`, `"é \"q\""`},
		{"[]", "[]"},
		{"[1, 2, 3,]", "[1,2,3]"},
		{"()", "[]"},
		{"(1,)", "[1]"},
		{"(1)", "1"},
		{"((1, 2), [3, (4,)])", "[[1,2],[3,[4]]]"},
		{"{}", "{}"},
		{"{1: [0.5, -1.0], 'b': None,}", `{"1":[0.5,-1.0],"b":null}`},
		{"{True: 1, None: 2, 1.5: 3}", `{"true":1,"null":2,"1.5":3}`},
		{"{'a': 1, 'b': 2, 'a': 3}", `{"a":3,"b":2}`},
		{" \n [ {'id': 3, 'next': -1} ] \n", `[{"id":3,"next":-1}]`},
	}
	for _, c := range ok {
		got, err := ParsePyLiteral(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("ParsePyLiteral(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	bad := []string{"", "[1, 2", "[1 2]", "{1}", "{1: 2 3: 4}", "{(1, 2): 3}", "{[1]: 2}", "'abc", "'a\nb'",
		"set()", "abc", "1 2", "01", "--", "'\\x4'", "[1,,2]", "(,)", "{,}", "1e", "b'x'", "[1] x"}
	for _, s := range bad {
		if got, err := ParsePyLiteral(s); err == nil {
			t.Errorf("ParsePyLiteral(%q) = %s, want an error", s, got)
		} else if !strings.Contains(err.Error(), "offset") {
			t.Errorf("ParsePyLiteral(%q): error %v names no offset", s, err)
		}
	}
}
