package envserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envcore"
)

// DefaultOthers is the built-in controller that answers the agents a
// client does not play, when its create names none (CreateRequest.Others).
const DefaultOthers = envcore.DefaultOthers

// A client may play only some agents of an episode (CreateRequest.Play):
// a learner of one role — the mode selector of an adaptive paradigm, say
// — then need not answer every plant, area and cell decision. The server
// answers the other agents itself with a built-in controller
// (CreateRequest.Others): a decision none of whose active agents is played
// never reaches the client and is audited with source builtin; a decision
// with played agents is published with those agents only (its
// active_agents), and all its audits have source external, the agents the
// server answered carrying the note model "builtin:<others>". An empty
// play (not an absent one) plays no agent: the server plays the whole
// episode with others, a baseline on the same terms as a learner's.

// playing is what a create's play and others resolve to.
type playing struct {
	played []string // in the order of the episode's agents
	others coord.Controller
}

// resolvePlay checks a create's play and others against the episode's
// agents and builds the others' controller (seeded with the episode's
// seed). A create without play is a client that plays every agent (nil);
// one with an empty play, a client that plays none.
func (s *Server) resolvePlay(req *CreateRequest, agents []string, seed uint64) (*playing, *apiError) {
	played, name, err := envcore.ResolvePlay(req.Play, req.Others, agents, s.cfg.Builtins)
	if err != nil {
		return nil, &apiError{code: http.StatusBadRequest, msg: err.Error()}
	}
	if req.Play == nil {
		return nil, nil
	}
	others, err := s.cfg.Builtins.New(name, seed)
	if err != nil {
		return nil, &apiError{code: http.StatusBadRequest, msg: fmt.Sprintf(`"others": %v`, err)}
	}
	return &playing{played: played, others: others}, nil
}

// playController is the coord.Controller of an episode whose client plays
// only some agents: the others' answers come from a built-in controller,
// in the episode's goroutine.
type playController struct {
	controller // the episode; its Notes
	others     coord.Controller
	played     map[string]bool
	// src is how the last Act's answers are audited (Source).
	src coord.Source
}

func newPlayController(e *episode, pl *playing) *playController {
	played := make(map[string]bool, len(pl.played))
	for _, id := range pl.played {
		played[id] = true
	}
	return &playController{controller: controller{e}, others: pl.others, played: played, src: coord.SourceExternal}
}

// Name implements coord.Controller: "http+<others>".
func (c *playController) Name() string { return ControllerName + "+" + c.others.Name() }

// Source implements coord.Controller. It is the source of the decision
// Act answered last: builtin when none of its active agents was played,
// external otherwise. harness.Run asks for it after Act, for the step Act
// answered (the envserver tests check the audits' sources).
func (c *playController) Source() coord.Source { return c.src }

// Act implements coord.Controller.
func (c *playController) Act(ctx context.Context, d *coord.Decision) (map[string]int, error) {
	e := c.e
	ask, theirs := envcore.SplitDecision(d, c.played)
	if ask == nil { // the client never sees this decision
		c.src = coord.SourceBuiltin
		e.setNotes(nil)
		if reason, closed := e.closedReason(); closed {
			return nil, errors.New("episode closed: " + reason)
		}
		return c.others.Act(ctx, d)
	}
	c.src = coord.SourceExternal
	var builtin map[string]int
	if theirs != nil { // answered first: the views are the interpreter's until Apply
		var err error
		if builtin, err = c.others.Act(ctx, theirs); err != nil {
			e.setNotes(nil)
			return nil, fmt.Errorf("built-in controller %s: %w", c.others.Name(), err)
		}
	}
	actions, notes, err := e.ask(ctx, ask)
	if err != nil {
		e.setNotes(nil)
		return nil, err
	}
	if theirs != nil {
		if notes == nil {
			notes = make(map[string]coord.AgentNote, len(theirs.ActiveAgents))
		}
		refused := ""
		if actions == nil { // the body was refused as a whole: every agent of the step falls back
			for _, n := range notes {
				refused = n.Error
				break
			}
		} else {
			for id := range theirs.ActiveAgents {
				if a, ok := builtin[id]; ok {
					actions[id] = a
				}
			}
		}
		for id := range theirs.ActiveAgents {
			notes[id] = coord.AgentNote{Model: "builtin:" + c.others.Name(), Error: refused, DecidedBy: coord.SourceBuiltin}
		}
	}
	e.setNotes(notes)
	return actions, nil
}

// closedReason reports whether the episode was closed, and why.
func (e *episode) closedReason() (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reason, e.state != StateRunning
}
