package sweep

import (
	"strings"
	"testing"
)

// Differs names the first input that differs: the version, an instance
// (changed, missing or extra), the paradigms; equal inputs pass.
func TestInputsDiffer(t *testing.T) {
	serve := Inputs{Version: "v1", Instances: map[string]string{"a": "1111", "b": "2222"}, Paradigms: "p"}
	for name, c := range map[string]struct {
		got  Inputs
		want string
	}{
		"same":      {Inputs{Version: "v1", Instances: map[string]string{"a": "1111", "b": "2222"}, Paradigms: "p"}, ""},
		"version":   {Inputs{Version: "v2", Instances: serve.Instances, Paradigms: "p"}, "coordbench v2, serve is v1"},
		"changed":   {Inputs{Version: "v1", Instances: map[string]string{"a": "1111", "b": "9999"}, Paradigms: "p"}, "instance b"},
		"missing":   {Inputs{Version: "v1", Instances: map[string]string{"a": "1111"}, Paradigms: "p"}, "instance b"},
		"extra":     {Inputs{Version: "v1", Instances: map[string]string{"a": "1111", "b": "2222", "c": "3"}, Paradigms: "p"}, "3 instances, serve 2"},
		"paradigms": {Inputs{Version: "v1", Instances: serve.Instances, Paradigms: "q"}, "paradigms"},
	} {
		err := serve.Differs(c.got)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
