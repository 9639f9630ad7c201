package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/silo/suite"
)

// Inputs are what a resolved suite depends on beyond the experiment
// file's bytes (which its id covers): the tool's version and, for des,
// the content of each instance and of the paradigms, files included. A
// distributed sweep's serve publishes its own (jetstream.Spec.Inputs) and a
// worker refuses to run a case it resolves from other ones: a case run
// on another version of an instance file would not belong to the
// experiment serve summarises.
type Inputs struct {
	Version string `json:"version"`
	// Instances maps each instance's case-id token to the SHA-256 of its
	// canonical JSON (instance.json).
	Instances map[string]string `json:"instances,omitempty"`
	// Paradigms is the SHA-256 of the resolved paradigms' JSON.
	Paradigms string `json:"paradigms_sha256,omitempty"`
}

// Inputs are the suite's inputs.
func (s *Suite) Inputs() Inputs {
	if s.Des == nil {
		return Inputs{Version: suite.Version()}
	}
	in := Inputs{Version: harness.Version(), Instances: map[string]string{}}
	for _, si := range s.Des.Config.Instances {
		in.Instances[si.Token] = si.SHA256
	}
	b, _ := json.Marshal(s.Des.Config.Paradigms) // plain data: cannot fail
	sum := sha256.Sum256(b)
	in.Paradigms = hex.EncodeToString(sum[:])
	return in
}

// Differs says how got (a worker's) differs from in (serve's), nil if it
// does not.
func (in *Inputs) Differs(got Inputs) error {
	const fix = "give every worker the instance and paradigm files serve read, at the same relative paths, and the same coordbench version"
	if got.Version != in.Version {
		return fmt.Errorf("this worker is coordbench %s, serve is %s: %s", got.Version, in.Version, fix)
	}
	for _, tok := range slices.Sorted(maps.Keys(in.Instances)) {
		if g, ok := got.Instances[tok]; !ok || g != in.Instances[tok] {
			return fmt.Errorf("instance %s: this worker's has SHA-256 %.12s…, serve's %.12s…: %s", tok, g, in.Instances[tok], fix)
		}
	}
	if len(got.Instances) != len(in.Instances) {
		return fmt.Errorf("this worker resolves %d instances, serve %d: %s", len(got.Instances), len(in.Instances), fix)
	}
	if got.Paradigms != in.Paradigms {
		return fmt.Errorf("the paradigms (paradigm files included) differ from serve's: %s", fix)
	}
	return nil
}

// InputsOf resolves the inputs of e (read from file, named in errors)
// alone, its controllers and models left out: what a worker compares with
// serve's before it takes a case.
func InputsOf(file string, e *Experiment) (Inputs, error) {
	if e.Benchmark != BenchmarkDes {
		return Inputs{Version: suite.Version()}, nil
	}
	opt := e.DesOptions()
	opt.Controllers = "builtin" // neither instances nor paradigms depend on them
	full, err := harness.ResolveSuite(opt)
	if err != nil {
		return Inputs{}, e.FieldError(file, err)
	}
	return (&Suite{Des: full}).Inputs(), nil
}
