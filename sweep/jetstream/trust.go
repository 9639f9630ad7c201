package jetstream

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/sweep"
)

// Trust is what a worker refuses from a served experiment. A worker takes
// its experiment from whoever can publish on the NATS server it joins,
// and reads API keys from its own environment by the names that
// experiment gives; so that a publisher it does not trust can neither
// have a key sent to an endpoint of their choosing nor have a file read
// outside the worker's experiment directory, it calls no model endpoint
// but loopback ones and those it was allowed, and reads instance and
// paradigm files only by local relative paths.
//
// Its errors name the worker's options AllowEndpoints (NewTrust's
// endpoints) and ExperimentDir (the directory the experiment's relative
// paths are read from, sweep.Experiment.Dir).
type Trust struct {
	// endpoints are the allowed model base URLs, normalised.
	endpoints []string
}

// NewTrust returns the Trust of a worker that may call the model
// endpoints allowEndpoints (base URLs) besides loopback ones.
func NewTrust(allowEndpoints []string) (Trust, error) {
	var t Trust
	for _, a := range allowEndpoints {
		n, err := normalEndpoint(a)
		if err != nil {
			return Trust{}, opterr.New("AllowEndpoints", "%s: %w", a, err)
		}
		t.endpoints = append(t.endpoints, n)
	}
	return t, nil
}

// Check refuses an experiment that calls a model endpoint the worker was
// not allowed (loopback and in-process stub: URLs are always allowed) or names an instance or
// paradigm file by a path that is not local (absolute, or leading out of
// the experiment directory).
func (t Trust) Check(e *sweep.Experiment) error {
	if e.WithLLM() {
		for _, m := range e.ModelList() {
			n, err := normalEndpoint(m.BaseURL)
			if err != nil {
				return fmt.Errorf("model %s: %w", m.Label(), err)
			}
			if !loopbackURL(n) && !llm.IsStubURL(n) && !slices.Contains(t.endpoints, n) { // a stub plays in the worker
				return fmt.Errorf("model %s: this worker does not call %s: API keys go only to loopback endpoints and those the worker allows%s",
					m.Label(), n, opterr.SeeText([]string{"AllowEndpoints"}))
			}
		}
	}
	if e.Des != nil {
		for _, l := range []sweep.List{e.Des.Instances, e.Des.ParadigmFiles} {
			for _, item := range l {
				for p := range strings.SplitSeq(item, ",") {
					if p = strings.TrimSpace(p); p != "" && !filepath.IsLocal(p) {
						return fmt.Errorf("the experiment names %q, outside the experiment directory: a worker reads only files below it%s",
							p, opterr.SeeText([]string{"ExperimentDir"}))
					}
				}
			}
		}
	}
	return nil
}

// loopbackURL reports whether u's host is localhost or a loopback address.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	return loopbackHost(p.Hostname())
}
