package envserver

import (
	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envcore"
	"github.com/coordbench/coordbench/des/factory"
)

// The agents, layout and offer of an episode come from package envcore,
// which every transport shares.

func agentIDs(p *factory.Plant, m coord.AuthorityMode) []string { return envcore.AgentIDs(p, m) }

func offeredModes(m coord.AuthorityMode) []string { return envcore.OfferedModes(m) }

// AreaLayout is one area and its cells (envcore.AreaLayout).
type AreaLayout = envcore.AreaLayout

func layout(p *factory.Plant) []AreaLayout { return envcore.Layout(p) }
