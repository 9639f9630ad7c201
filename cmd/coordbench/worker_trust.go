package main

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/sweep"
)

// A worker takes its experiment from whoever can publish on the NATS
// server it joins, and reads API keys from its own environment by the
// names that experiment gives. workerTrust is what it refuses from a
// served experiment, so that a publisher it does not trust can neither
// have a key sent to an endpoint of their choosing nor have a file outside
// --experiment-dir read.
type workerTrust struct {
	// endpoints are the model base URLs (normalised) the worker may call
	// besides loopback ones (--allow-endpoint).
	endpoints []string
}

func newWorkerTrust(allow []string) (workerTrust, error) {
	var t workerTrust
	for _, a := range allow {
		n, err := normalEndpoint(a)
		if err != nil {
			return t, fmt.Errorf("--allow-endpoint %s: %w", a, err)
		}
		t.endpoints = append(t.endpoints, n)
	}
	return t, nil
}

// check refuses an experiment that calls a model endpoint the worker was
// not allowed (loopback is always allowed) or names an instance or
// paradigm file outside the experiment directory.
func (t workerTrust) check(e *sweep.Experiment) error {
	if e.WithLLM() {
		for _, m := range e.ModelList() {
			n, err := normalEndpoint(m.BaseURL)
			if err != nil {
				return fmt.Errorf("model %s: %w", m.Label(), err)
			}
			if !loopbackURL(n) && !slices.Contains(t.endpoints, n) {
				return fmt.Errorf("model %s: this worker does not call %s (start it with --allow-endpoint %s to let it; API keys go only to endpoints the worker allows)", m.Label(), n, n)
			}
		}
	}
	if e.Des != nil {
		for _, l := range []sweep.List{e.Des.Instances, e.Des.ParadigmFiles} {
			for _, item := range l {
				for p := range strings.SplitSeq(item, ",") {
					if p = strings.TrimSpace(p); p != "" && !filepath.IsLocal(p) {
						return fmt.Errorf("the experiment names %q, outside --experiment-dir: a worker reads only files below it", p)
					}
				}
			}
		}
	}
	return nil
}

// normalEndpoint is a base URL as the model client normalises it.
func normalEndpoint(base string) (string, error) {
	c, err := llm.New(llm.Config{BaseURL: base, Model: "x"})
	if err != nil {
		return "", err
	}
	return c.Config().BaseURL, nil
}

func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := p.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
