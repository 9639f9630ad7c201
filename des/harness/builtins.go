package harness

import (
	"fmt"

	"github.com/coordbench/coordbench/des/coord"
)

// Builtins is a set of controllers that a suite names without a
// ControllerMaker: policy.Builtins() is the set coordbench ships. The
// harness knows no controller of its own; whoever resolves a suite or
// rebuilds a case passes the set it means, and a nil set has none (every
// controller then needs a maker).
type Builtins interface {
	// New builds the controller called name for one episode; seed drives
	// any randomness it has.
	New(name string, seed uint64) (coord.Controller, error)
	// Names lists the controllers New builds; the first is the one that
	// the Controllers spec "builtin" names.
	Names() []string
}

// newBuiltin builds name from b; a nil b has no controllers.
func newBuiltin(b Builtins, name string, seed uint64) (coord.Controller, error) {
	if b == nil {
		return nil, fmt.Errorf("unknown controller %q (no built-in controllers given)", name)
	}
	return b.New(name, seed)
}

// builtinNames lists b's controllers; a nil b has none.
func builtinNames(b Builtins) []string {
	if b == nil {
		return nil
	}
	return b.Names()
}
