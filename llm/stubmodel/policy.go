package stubmodel

import (
	"fmt"
	"net/http"
	"strings"
)

// Policy is a model that a stub can play behind any http.Server
// (coordbench llm stub --policy NAME): its name and a constructor of its
// chat-completions handler. A policy that answers a benchmark's prompts
// needs that benchmark's code, which this package does not import; such
// policies live beside it, one package per benchmark (despolicy,
// silogather), and the command puts them in one Policies value.
type Policy struct {
	Name string
	// New returns a fresh handler and a function that summarises what the
	// handler has served so far (printed when the stub stops).
	New func() (handler http.Handler, served func() string)
}

// Policies are the policies a stub can play, in the order they are listed.
type Policies []Policy

// New returns a fresh handler of the policy named name and its summary.
// An unknown name is an error that lists the known ones.
func (ps Policies) New(name string) (http.Handler, func() string, error) {
	for _, p := range ps {
		if p.Name == name {
			h, served := p.New()
			return h, served, nil
		}
	}
	return nil, nil, fmt.Errorf("unknown stub policy %q (want %s)", name, ps.names())
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
