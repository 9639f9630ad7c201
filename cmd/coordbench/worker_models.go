package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/sweep"
)

// workerModels builds the model-backed controllers or agents of e for one
// case on a distributed sweep's worker, as sweepModels does for sweep run,
// with two differences: responses go to the case's own cache file (cache,
// read-write, so that it travels with the case and serve merges it), and
// every model attempt first asks limiter (the coordinator's global
// limits; nil: none). The closer releases the cache.
func workerModels(e *sweep.Experiment, cache string, limiter llm.Limiter) (sweep.Models, func(), error) {
	if !e.WithLLM() {
		return sweep.Models{}, func() {}, nil
	}
	if e.LLM == nil {
		return sweep.Models{}, nil, errors.New("the experiment runs llm controllers or agents: give its llm section (model, base_url, ...; docs/experiments.md)")
	}
	l := *e.LLM
	switch l.CacheMode {
	case llm.CacheReplay:
		return sweep.Models{}, nil, errors.New("experiment llm.cache_mode replay: replay on one machine with sweep run (workers record responses; serve merges them into DIR/llm_cache.db)")
	case llm.CacheOff:
		l.Cache = ""
	default:
		l.Cache, l.CacheMode = cache, llm.CacheReadWrite
	}
	fs := pflag.NewFlagSet("llm", pflag.ContinueOnError)
	var dl llmFlags
	var sl siloLLMFlags
	if e.Benchmark == sweep.BenchmarkDes {
		dl.register(fs)
		dl.limiter = limiter
	} else {
		sl.register(fs)
		sl.limiter = limiter
	}
	if err := setLLMFlags(fs, &l); err != nil {
		return sweep.Models{}, nil, err
	}
	if e.Benchmark == sweep.BenchmarkDes {
		dl.abortOnModelError = true // a model failure fails the case
		mk, closer, err := dl.maker()
		if err != nil {
			return sweep.Models{}, nil, fmt.Errorf("experiment llm section: %w", err)
		}
		return sweep.Models{DesMakers: []harness.ControllerMaker{mk}}, closer, nil
	}
	agent, closer, err := sl.agent(e.SiloOptions().Agent)
	if err != nil {
		return sweep.Models{}, nil, fmt.Errorf("experiment llm section: %w", err)
	}
	return sweep.Models{SiloLLM: agent}, closer, nil
}
