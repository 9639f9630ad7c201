package stubmodel

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Policy is a model that a stub can play behind any http.Server
// (coordbench llm stub --policy NAME) or in-process (a "stub:NAME" base
// URL): its name and a constructor of its chat-completions handler. A
// policy that answers a benchmark's prompts needs that benchmark's code,
// which this package does not import; such policies live beside it, one
// package per benchmark (despolicy, silogather), and the command puts them
// in one Policies value.
type Policy struct {
	Name string
	// New returns a fresh handler with the options o and a function that
	// summarises what the handler has served so far (printed when the
	// stub stops).
	New func(o Options) (handler http.Handler, served func() string)
}

// Options are the settings every policy takes.
type Options struct {
	// Seed seeds the generic answers (Generic), which a policy gives to
	// the requests it does not understand. 0 is the default.
	Seed int64
	// Script, if set, answers first: a request one of its entries matches
	// gets that entry's reply, any other the policy's (Script.Wrap).
	Script *Script
}

// Policies are the policies a stub can play, in the order they are listed.
type Policies []Policy

// New returns a fresh handler of the policy named name with the options
// o, and its summary. An unknown name is an error that lists the known
// ones.
func (ps Policies) New(name string, o Options) (http.Handler, func() string, error) {
	for _, p := range ps {
		if p.Name == name {
			h, served := p.New(o)
			if o.Script != nil {
				var scripted func() int64
				h, scripted = o.Script.Wrap(h)
				policy := served
				served = func() string { return fmt.Sprintf("%d scripted replies; %s", scripted(), policy()) }
			}
			return h, served, nil
		}
	}
	return nil, nil, fmt.Errorf("unknown stub policy %q (want %s)", name, ps.names())
}

// NewStub returns a fresh handler of the policy named name, with the
// options of a "stub:NAME?OPTIONS" base URL: seed=N (Options.Seed). It
// makes Policies the llm package's Stubs, so that a model client plays
// them in-process.
func (ps Policies) NewStub(name string, options url.Values) (http.Handler, error) {
	var o Options
	for k, vs := range options {
		switch k {
		case "seed":
			s, err := strconv.ParseInt(vs[len(vs)-1], 10, 64)
			if err != nil || len(vs) != 1 {
				return nil, fmt.Errorf("stub:%s: seed %q: want one integer", name, strings.Join(vs, ","))
			}
			o.Seed = s
		default:
			return nil, fmt.Errorf("stub:%s: unknown option %q (want seed)", name, k)
		}
	}
	h, _, err := ps.New(name, o)
	return h, err
}

// names lists the policies as "a, b or c".
func (ps Policies) names() string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
