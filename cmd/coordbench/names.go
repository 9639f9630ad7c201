package main

import (
	"slices"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/policy"
)

// Names of a fixed vocabulary (reported instances, paradigms, controllers,
// seed splits, group keys, protocols, agents, modes, baselines, formats)
// are matched without regard to case on every command of both
// benchmarks, as task ids, levels and protocols always were in silo, and
// then used in their one canonical spelling, so that case ids, manifests
// and metrics never hold two spellings of one name. Paths, model names and
// case ids are taken as given.

// canon rewrites each item of the comma list spec that equals one of known
// but for case to that spelling; other items are left as given, for the
// library to accept or refuse. A spec without commas stays one item.
func canon(spec string, known ...string) string {
	items := strings.Split(spec, ",")
	for i, it := range items {
		t := strings.TrimSpace(it)
		for _, k := range known {
			if t != k && strings.EqualFold(t, k) {
				items[i] = k
				break
			}
		}
	}
	return strings.Join(items, ",")
}

// instanceNames are the reported instances and the suite shorthands.
func instanceNames() []string {
	return slices.Concat(factory.BuiltinNames(), []string{"A5C12", "A3C9", "all"})
}

// paradigmNames are the paradigms of a set (nil: the built-ins) and "all".
func paradigmNames(set *coord.Paradigms) []string {
	return append([]string{"all"}, set.IDs()...)
}

// controllerNames are the controllers a --controller flag can name.
func controllerNames() []string {
	return slices.Concat([]string{"builtin", "llm", extctl.Name}, policy.Names())
}
