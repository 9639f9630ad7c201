package round

import (
	"fmt"
	"slices"
	"strings"
)

// teamNames backs TeamNames.
var teamNames = []string{"reference", "tree", "chain"}

// TeamNames lists the scripted teams NewTeamByName builds.
func TeamNames() []string { return slices.Clone(teamNames) }

// NewTeamByName builds a scripted team of n agents: "reference" (the
// star: gather at agent 0, compute, distribute), "tree" (binary-tree
// reduction) or "chain" (relay along the line 0..n-1).
func NewTeamByName(name string, n int) ([]Agent, error) {
	switch name {
	case "reference":
		return NewReferenceTeam(n), nil
	case "tree":
		return NewTreeTeam(n), nil
	case "chain":
		return NewChainTeam(n), nil
	}
	return nil, fmt.Errorf("unknown agent team %q (want %s)", name, strings.Join(teamNames, ", "))
}
