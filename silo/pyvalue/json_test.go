package pyvalue

import (
	"strings"
	"testing"
)

func TestJSONCodec(t *testing.T) {
	v, err := ParseJSON([]byte(` {"b": [1, 2.5, -0.0, 1e400, "\u00e9\ud83d\ude00\n"], "a": {}, "b": null, "c": []} `))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(Canon(v)); got != `{"b":null,"a":{},"c":[]}` {
		t.Errorf("repeated key: %s", got)
	}
	v, _ = ParseJSON([]byte(`[1, 2.5, -0.0, 1e400, "\u00e9\ud83d\ude00\n\u0001", true]`))
	if got := string(Canon(v)); got != `[1,2.5,-0.0,Infinity,"é😀\n\u0001",true]` {
		t.Errorf("canon: %s", got)
	}
	if got := string(EncodeJSON(v, 2)); got != "[\n  1,\n  2.5,\n  -0.0,\n  Infinity,\n  \"é😀\\n\\u0001\",\n  true\n]" {
		t.Errorf("indent: %q", got)
	}
	for _, bad := range []string{``, `01`, `1.`, `[1,]`, `{"a" 1}`, `"\x01"`, `"\q"`, `[1] 2`, `tru`, `-`, `{1: 2}`, strings.Repeat("[", 2000)} {
		if _, err := ParseJSON([]byte(bad)); err == nil {
			t.Errorf("ParseJSON(%.20q) succeeded", bad)
		}
	}
}
