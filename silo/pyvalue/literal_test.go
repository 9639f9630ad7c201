package pyvalue

import (
	"strings"
	"testing"
)

func TestParseLiteral(t *testing.T) {
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
		got, err := ParseLiteral(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("ParseLiteral(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	bad := []string{"", "[1, 2", "[1 2]", "{1}", "{1: 2 3: 4}", "{(1, 2): 3}", "{[1]: 2}", "'abc", "'a\nb'",
		"set()", "abc", "1 2", "01", "--", "'\\x4'", "[1,,2]", "(,)", "{,}", "1e", "b'x'", "[1] x"}
	for _, s := range bad {
		if got, err := ParseLiteral(s); err == nil {
			t.Errorf("ParseLiteral(%q) = %s, want an error", s, got)
		} else if !strings.Contains(err.Error(), "offset") {
			t.Errorf("ParseLiteral(%q): error %v names no offset", s, err)
		}
	}
}
