package envcore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
)

// DefaultOthers is the built-in controller that answers the agents a
// client does not play, when it names none.
const DefaultOthers = "rule"

// ResolvePlay checks a client's play and others against the episode's
// agents (docs/http-server.md, "Playing some agents"): the played agents
// in the order of agents and the name of the built-in controller of the
// rest. A nil play plays every agent (nil, ""); an empty one plays none.
// The errors name the request's fields ("play", "others").
func ResolvePlay(play []string, others string, agents []string, builtins harness.Builtins) ([]string, string, error) {
	if play == nil {
		if others != "" {
			return nil, "", fmt.Errorf(`"others" names who answers the agents the client does not play: give "play" too`)
		}
		return nil, "", nil
	}
	if len(play) > len(agents) {
		return nil, "", fmt.Errorf(`"play" lists %d agents, but the episode has %d (%s)`, len(play), len(agents), strings.Join(agents, ", "))
	}
	want := make(map[string]bool, len(play))
	for _, id := range play {
		if !slices.Contains(agents, id) {
			return nil, "", fmt.Errorf(`"play": no agent %q in this episode (its agents: %s)`, Trunc(id, 64), strings.Join(agents, ", "))
		}
		if want[id] {
			return nil, "", fmt.Errorf(`"play": agent %q is listed twice`, id)
		}
		want[id] = true
	}
	if others == "" {
		others = DefaultOthers
	}
	if builtins == nil {
		return nil, "", fmt.Errorf(`"play": this server has no built-in controllers to answer the other agents`)
	}
	if _, err := builtins.New(others, 0); err != nil {
		return nil, "", fmt.Errorf(`"others": %v (one of %s)`, err, strings.Join(builtins.Names(), ", "))
	}
	played := make([]string, 0, len(play))
	for _, id := range agents {
		if want[id] {
			played = append(played, id)
		}
	}
	return played, others, nil
}

// Trunc cuts s to n bytes, marking the cut, for quoting a client's input
// in an error.
func Trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// SplitDecision splits decision d of a client that plays the agents of
// played into the part it is shown (ask: its played active agents; nil
// when it has none, so the client never sees d) and the part a built-in
// controller answers (theirs: the other active agents; nil when there
// are none). Both share d's views, which stay the interpreter's until
// the step is applied.
func SplitDecision(d *coord.Decision, played map[string]bool) (ask, theirs *coord.Decision) {
	mine := 0
	for id := range d.ActiveAgents {
		if played[id] {
			mine++
		}
	}
	part := func(n int) *coord.Decision {
		return &coord.Decision{Version: d.Version, Step: d.Step, Time: d.Time, ActiveAgents: make(map[string]*coord.View, n)}
	}
	if mine > 0 {
		ask = part(mine)
	}
	if mine < len(d.ActiveAgents) {
		theirs = part(len(d.ActiveAgents) - mine)
	}
	for id, v := range d.ActiveAgents {
		if played[id] {
			ask.ActiveAgents[id] = v
		} else {
			theirs.ActiveAgents[id] = v
		}
	}
	return ask, theirs
}
