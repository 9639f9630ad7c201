package report

import (
	"slices"
	"strings"

	"github.com/coordbench/coordbench/internal/opterr"
)

// Options.CompareBy: within one suite, the cases of two values of a key
// (two models, say, of a sweep over a models list), paired case by case as
// Compare pairs two suites. "KEY" takes the key's two values (an error
// when the suite has another number of them); "KEY=A,B" names them (A −
// B). Keys: controller, model, framework for a des suite; agent and model
// (the agents llm-<label>, named by label) for a silo suite. Cases without
// a value of the key (a built-in controller's model) are left out.

// compareBySections compares, in the suite in dir, the cases of the two
// values of the key that by names.
func compareBySections(dir, by string) ([]Section, error) {
	key, want, named := strings.Cut(by, "=")
	kind, err := Detect(dir)
	if err != nil {
		return nil, err
	}
	if kind == KindDES {
		k := slices.Index(blockKeys, key)
		if k < 1 {
			return nil, opterr.New("CompareBy", "a des suite compares by controller, model or framework (got %q)", key)
		}
		s, err := readDES(dir)
		if err != nil {
			return nil, err
		}
		var values distinct[string]
		for _, g := range s.groups {
			if g.block[k] != "" { // a built-in controller's cases have no model nor framework
				values.add(g.block[k])
			}
		}
		a, b, err := twoValues(key, values.list, want, named)
		if err != nil {
			return nil, err
		}
		part := func(v string) *desSuite {
			p := *s
			p.groups = slices.DeleteFunc(slices.Clone(s.groups), func(g *desGroup) bool { return g.block[k] != v })
			return &p
		}
		return compareDESSuites(part(a), part(b), dir+" ["+key+" "+a+"]", dir+" ["+key+" "+b+"]")
	}
	if key != "agent" && key != "model" {
		return nil, opterr.New("CompareBy", "a silo suite compares by agent or model (got %q)", key)
	}
	runs, err := readSiloRuns(dir)
	if err != nil {
		return nil, err
	}
	name := func(agent string) string { return agent } // the value a user names
	if key == "model" {
		name = func(agent string) string { return strings.TrimPrefix(agent, "llm-") }
	}
	var values distinct[string]
	for _, r := range runs {
		if !r.baseline && (key == "agent" || strings.HasPrefix(r.agent, "llm-")) {
			values.add(name(r.agent))
		}
	}
	a, b, err := twoValues(key, values.list, want, named)
	if err != nil {
		return nil, err
	}
	part := func(v string) []siloRunRow {
		var out []siloRunRow
		for _, r := range runs {
			if (key == "agent" || strings.HasPrefix(r.agent, "llm-")) && name(r.agent) == v {
				out = append(out, r)
			}
		}
		return out
	}
	return compareSiloRuns(part(a), part(b), dir+" ["+key+" "+a+"]", dir+" ["+key+" "+b+"]")
}

// twoValues picks the two compared values of key among values: those named
// in want ("A,B") or, without a name, the only two.
func twoValues(key string, values []string, want string, named bool) (a, b string, err error) {
	list := strings.Join(values, ", ")
	if !named {
		if len(values) != 2 {
			return "", "", opterr.New("CompareBy", "the suite has %d values of %s (%s): name the two to compare, %s=A,B", len(values), key, list, key)
		}
		return values[0], values[1], nil
	}
	parts := strings.Split(want, ",")
	if len(parts) != 2 || parts[0] == parts[1] {
		return "", "", opterr.New("CompareBy", "want %s=A,B, two different values (got %q)", key, want)
	}
	for _, p := range parts {
		if !slices.Contains(values, p) {
			return "", "", opterr.New("CompareBy", "no case has %s %q (the suite has %s)", key, p, list)
		}
	}
	return parts[0], parts[1], nil
}
