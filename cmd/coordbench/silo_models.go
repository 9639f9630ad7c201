package main

// The models of silo run and silo suite: the one of --llm-model and
// --llm-base-url, the named ones of --llm-endpoint (each with its own
// limits, as an experiment file's models entries), and the mixed team of
// --team or --team-shares that plays them together (agent kind team).

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/play"
)

// siloModels are the LLM agents of a silo run or suite: one per model
// (agent kind llm runs each) and the mixed team (agent kind team).
type siloModels struct {
	llms []*play.LLMAgent
	team *play.Team
	// status is the endpoints' live state for progress lines.
	status func() string
}

// endpointKeys are --llm-endpoint's keys: those of an experiment file's
// models entry (llm.Spec's YAML), by the option an error names.
var endpointKeys = map[string]string{"Name": "name", "Model": "model", "BaseURL": "base_url", "APIKeyEnv": "api_key_env",
	"Temperature": "temperature", "MaxTokens": "max_tokens", "Seed": "seed", "Concurrency": "concurrency", "RPM": "rpm",
	"LLM": "model"}

// parseEndpoint reads one --llm-endpoint value, key=value pairs separated
// by commas, over def (what the --llm-* flags give).
func parseEndpoint(s string, def llm.Spec) (llm.Spec, error) {
	spec := def
	spec.Name, spec.Model, spec.BaseURL = "", "", ""
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			return llm.Spec{}, fmt.Errorf("%q: want key=value", item)
		}
		if seen[k] {
			return llm.Spec{}, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		var err error
		switch k {
		case "name":
			spec.Name = v
		case "model":
			spec.Model = v
		case "base_url":
			spec.BaseURL = v
		case "api_key_env":
			spec.APIKeyEnv = v
		case "temperature":
			var t float64
			t, err = strconv.ParseFloat(v, 64)
			spec.Temperature = &t
		case "max_tokens":
			spec.MaxTokens, err = strconv.Atoi(v)
		case "seed":
			var seed int64
			seed, err = strconv.ParseInt(v, 10, 64)
			spec.Seed = &seed
		case "concurrency":
			spec.Limits.Concurrency, err = strconv.Atoi(v)
		case "rpm":
			spec.Limits.RPM, err = strconv.ParseFloat(v, 64)
		default:
			return llm.Spec{}, fmt.Errorf("unknown key %q (want name, model, base_url, api_key_env, temperature, max_tokens, seed, concurrency, rpm)", k)
		}
		if err != nil {
			return llm.Spec{}, fmt.Errorf("%s: %q is not a number", k, v)
		}
	}
	if spec.Model == "" {
		return llm.Spec{}, errors.New("model: required")
	}
	if spec.BaseURL == "" {
		return llm.Spec{}, errors.New("base_url: required (try a stub played in-process: base_url=stub:silo-gather)")
	}
	return spec, nil
}

// endpointError puts an error of an --llm-endpoint entry's configuration
// in the entry's keys.
func endpointError(raw string, err error) error {
	var oe *opterr.Error
	if errors.As(err, &oe) {
		if k, ok := endpointKeys[oe.Option]; ok {
			err = fmt.Errorf("%s: %v", k, oe.Err)
		}
	}
	return fmt.Errorf("--llm-endpoint %q: %w", raw, err)
}

// parseTeam reads --team (counts) or --team-shares (shares): model=n,
// comma separated, the models named by their labels.
func parseTeam(flag, s string, shares bool, models []*play.LLMAgent) (*play.Team, error) {
	tm := &play.Team{Shares: shares}
	var labels []string
	for _, l := range models {
		labels = append(labels, l.ModelLabel())
	}
	for _, item := range splitList(s) {
		name, count, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: %q: want model=number (e.g. a=3,b=2)", flag, item)
		}
		k := slices.Index(labels, name)
		if k < 0 {
			return nil, fmt.Errorf("%s: no model %q (the models: %s; name them with --llm-endpoint name=…,model=…,base_url=…)", flag, name, strings.Join(labels, ", "))
		}
		tm.Members = append(tm.Members, play.Member{LLM: models[k], Count: n})
	}
	if err := tm.Check(); err != nil {
		var oe *opterr.Error
		if errors.As(err, &oe) {
			err = oe.Err
		}
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return tm, nil
}

// models builds the LLM agents that agents (a comma list of agent kinds)
// asks for: every model if it names llm or team, and the mixed team if it
// names team; nothing otherwise (and then the model flags are refused).
// The closer releases the response cache.
func (f *siloLLMFlags) models(agents string) (*siloModels, func(), error) {
	kinds := splitList(agents)
	wantLLM, wantTeam := slices.Contains(kinds, play.AgentLLM), slices.Contains(kinds, play.AgentTeam)
	teamFlag, teamSpec := "--team", f.team
	if f.teamShares != "" {
		teamFlag, teamSpec = "--team-shares", f.teamShares
	}
	switch {
	case f.team != "" && f.teamShares != "":
		return nil, nil, errors.New("--team and --team-shares given: a team has counts or shares, not both")
	case teamSpec != "" && !wantTeam:
		return nil, nil, fmt.Errorf("%s given, but --agent does not include %s: add it, or drop %s", teamFlag, play.AgentTeam, teamFlag)
	case wantTeam && teamSpec == "":
		return nil, nil, fmt.Errorf("--agent %s needs a mixed team: --team model=count,… or --team-shares model=share,… over the models of --llm-endpoint", play.AgentTeam)
	case !wantLLM && !wantTeam:
		if len(f.endpoints) > 0 {
			return nil, nil, errors.New("--llm-endpoint given, but --agent does not include llm or team: drop it, or run a model")
		}
		if err := f.onlyWith(false, "--agent does not include llm or team"); err != nil {
			return nil, nil, err
		}
		return &siloModels{}, func() {}, nil
	}
	base := f.spec
	if f.fs != nil && f.fs.Changed("llm-seed") {
		seed := f.seed
		base.Seed = &seed
	}
	var specs []llm.Spec
	var raws []string
	if f.spec.Model != "" || f.spec.BaseURL != "" || len(f.endpoints) == 0 {
		specs, raws = append(specs, llm.Spec{}), append(raws, "") // the flags' own model, built as before
	}
	for _, raw := range f.endpoints {
		spec, err := parseEndpoint(raw, base)
		if err != nil {
			return nil, nil, endpointError(raw, err)
		}
		specs, raws = append(specs, spec), append(raws, raw)
	}
	cfg := play.LLMConfig{ToolFormat: f.toolFormat, ToolResults: canon(f.toolResults, "published", "compact"), Scaffold: f.scaffold, ContextBudget: f.contextBudget,
		ReplyReserve: f.replyReserve, MaxModelFailures: f.maxModelFailures}
	for i, spec := range specs { // check all before the cache is opened
		c := cfg
		if c.Model = spec; raws[i] == "" {
			c.Model = f.spec
		}
		if err := c.Validate(); err != nil {
			if raws[i] == "" {
				return nil, nil, err
			}
			return nil, nil, endpointError(raws[i], err)
		}
	}
	flagSpec, o, closer, err := f.values()
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*siloModels, func(), error) {
		closer()
		return nil, nil, err
	}
	m := &siloModels{}
	var statuses []func() string
	for i, spec := range specs {
		c, oi := cfg, o
		if raws[i] == "" {
			c.Model = flagSpec // the command's endpoint state, as before there were several models
		} else {
			c.Model, oi.Endpoints = spec, llm.NewEndpoints() // each entry its own limits, as an experiment's
		}
		c.Options = oi
		l, err := play.NewLLMAgent(c)
		if err != nil {
			if raws[i] == "" {
				return fail(err)
			}
			return fail(endpointError(raws[i], err))
		}
		for _, prev := range m.llms {
			if prev.ModelLabel() == l.ModelLabel() {
				return fail(fmt.Errorf("two models are labelled %q: give each --llm-endpoint its own name", l.ModelLabel()))
			}
		}
		m.llms = append(m.llms, l)
		statuses = append(statuses, l.Status)
	}
	if wantTeam {
		if m.team, err = parseTeam(teamFlag, teamSpec, f.teamShares != "", m.llms); err != nil {
			return fail(err)
		}
	}
	m.status = statuses[0]
	if len(statuses) > 1 {
		m.status = func() string {
			var parts []string
			for i, st := range statuses {
				parts = append(parts, m.llms[i].ModelLabel()+": "+st())
			}
			return strings.Join(parts, "; ")
		}
	}
	return m, closer, nil
}

// teamError names the team flag in use in an error of option Teams
// (flagOf names --team).
func (f *siloLLMFlags) teamError(err error) error {
	var oe *opterr.Error
	if f.teamShares == "" || !errors.As(err, &oe) || oe.Option != "Teams" {
		return err
	}
	return &opterr.Error{Option: "--team-shares", Err: oe.Err, See: oe.See}
}
