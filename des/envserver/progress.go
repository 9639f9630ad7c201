package envserver

import "github.com/coordbench/coordbench/des/envcore"

// Progress is what an episode has achieved so far (envcore.Progress, shared
// with the other transports).
type Progress = envcore.Progress

// tally is the factory.Tracer behind Progress. It runs in the episode's
// goroutine only; snapshots are copied out under the episode's lock.
type tally struct{ *envcore.Tally }

func newTally() *tally { return &tally{envcore.NewTally()} }

// at is the tally at simulation time now.
func (t *tally) at(now float64) Progress { return t.At(now) }
