package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/inputfile"
)

// SectionRoles is a des suite's model use by role (metrics.json
// secondary.by_role and episode_timing.json by_role of each case), when
// some case has it (model-backed controllers).
const SectionRoles = "roles"

// maxMetricsFile bounds a case's metrics.json as the report reads it.
const maxMetricsFile = 1 << 20

// roleLine is one role of one row of the matrix (block × paradigm): its
// figures summed over the row's finished cases that have them.
type roleLine struct {
	g        *desGroup
	role     string
	episodes int               // cases with the role in by_role
	usage    harness.RoleUsage // summed
	timed    int               // of them, with episode_timing.json by_role
	timing   harness.RoleTiming
}

// roleOrder puts the levels of a holarchy top down; other roles after, by
// name.
var roleOrder = []string{"plant", "selector", "area", "cell"}

// readRoles reads by_role of every finished case of s; nil when no case has
// it.
func readRoles(s *desSuite) ([]roleLine, error) {
	var out []roleLine
	for _, g := range s.groups {
		lines := map[string]*roleLine{}
		for _, c := range g.cases {
			dir := filepath.Join(s.dir, "cases", c.id)
			usage, err := readCaseRoles(filepath.Join(dir, harness.FileMetrics))
			if err != nil {
				return nil, err
			}
			if usage == nil {
				continue
			}
			et, _, err := readEpisodeTiming(filepath.Join(dir, harness.FileEpisodeTiming))
			if err != nil {
				return nil, err
			}
			timing := et.ByRole
			for role, u := range usage {
				l := lines[role]
				if l == nil {
					l = &roleLine{g: g, role: role}
					lines[role] = l
				}
				l.episodes++
				l.usage.Decisions += u.Decisions
				l.usage.Fallbacks += u.Fallbacks
				l.usage.LLMCalls += u.LLMCalls
				l.usage.PromptTokens += u.PromptTokens
				l.usage.CompletionTokens += u.CompletionTokens
				l.usage.PromptCachedTokens += u.PromptCachedTokens
				if tm, ok := timing[role]; ok {
					l.timed++
					l.timing.Answers += tm.Answers
					l.timing.CachedAnswers += tm.CachedAnswers
					l.timing.Retries += tm.Retries
					l.timing.LatencyMSSum += tm.LatencyMSSum
					l.timing.LatencyMSMax = max(l.timing.LatencyMSMax, tm.LatencyMSMax)
				}
			}
		}
		roles := make([]string, 0, len(lines))
		for r := range lines {
			roles = append(roles, r)
		}
		slices.SortFunc(roles, func(a, b string) int {
			ia, ib := slices.Index(roleOrder, a), slices.Index(roleOrder, b)
			switch {
			case ia >= 0 && ib >= 0:
				return ia - ib
			case ia >= 0:
				return -1
			case ib >= 0:
				return 1
			}
			if a < b {
				return -1
			}
			return 1
		})
		for _, r := range roles {
			out = append(out, *lines[r])
		}
	}
	return out, nil
}

// readCaseRoles reads secondary.by_role of a case's metrics.json (nil when
// the case has none, or no metrics.json: a case kept only in the summary).
func readCaseRoles(path string) (map[string]harness.RoleUsage, error) {
	b, err := inputfile.Read(path, "case metrics", maxMetricsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m struct {
		Secondary struct {
			ByRole map[string]harness.RoleUsage `json:"by_role"`
		} `json:"secondary"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for role, u := range m.Secondary.ByRole {
		if u.Decisions < 0 || u.Fallbacks < 0 || u.Fallbacks > u.Decisions || u.LLMCalls < 0 || u.PromptTokens < 0 || u.CompletionTokens < 0 || u.PromptCachedTokens < 0 {
			return nil, fmt.Errorf("%s: secondary.by_role.%s: negative counts or more fallbacks than decisions", path, role)
		}
	}
	return m.Secondary.ByRole, nil
}

// rolesSection is the table of lines: per row of the matrix and role, the
// mean per episode of its decisions, calls and tokens, its fallback share,
// and the wall-clock side.
func (s *desSuite) rolesSection(lines []roleLine) Section {
	sec := Section{Suite: s.dir, Kind: SectionRoles, Title: desTitle(s.dir) + ": model use by role"}
	shown := s.shownBlockKeys()
	t := Table{Title: "Model use by role",
		Caption: "Per row of the matrix and role, over its n finished cases: the mean per episode of the role's audited answers, model calls and tokens (metrics.json secondary.by_role, reproducible), the share of its answers that fell back (G_fb's part), " +
			"and from episode_timing.json (wall clock: the machine's, the endpoint's and the cache's, not a result) the mean latency per answer, the retries per episode and the share of answers served from the response cache."}
	for _, k := range shown {
		t.Left = append(t.Left, len(t.Head))
		t.Head = append(t.Head, blockKeys[k])
	}
	t.Left = append(t.Left, len(t.Head), len(t.Head)+1)
	t.Head = append(t.Head, "paradigm", "role", "n", "decisions", "fallback share ↓", "calls", "input tokens ↓", "output tokens ↓", "ms / answer ↓", "retries", "cached share")
	for _, k := range shown {
		sec.CSVHead = append(sec.CSVHead, blockKeys[k])
	}
	sec.CSVHead = append(sec.CSVHead, "paradigm", "role", "n", "decisions_mean", "fallback_share", "llm_calls_mean", "prompt_tokens_mean", "completion_tokens_mean",
		"prompt_cached_tokens_mean", "timed_n", "latency_ms_per_answer", "latency_ms_max", "retries_mean", "cached_share")
	for _, l := range lines {
		n := float64(l.episodes)
		u, tm := l.usage, l.timing
		per := func(v float64) float64 { return v / n }
		share := func(a, b int) float64 {
			if b == 0 {
				return math.NaN()
			}
			return float64(a) / float64(b)
		}
		nan := math.NaN()
		lat, retries, cached, maxLat := nan, nan, nan, nan
		if l.timed > 0 {
			retries = float64(tm.Retries) / float64(l.timed)
			if tm.Answers > 0 {
				lat, cached, maxLat = tm.LatencyMSSum/float64(tm.Answers), share(tm.CachedAnswers, tm.Answers), tm.LatencyMSMax
			}
		}
		var row []Cell
		var csv []string
		for _, k := range shown {
			row = append(row, Cell{Text: l.g.block[k]})
			csv = append(csv, l.g.block[k])
		}
		fb := share(u.Fallbacks, u.Decisions)
		row = append(row, Cell{Text: l.g.paradigm}, Cell{Text: l.role}, Cell{Text: strconv.Itoa(l.episodes)},
			Cell{Text: fnum(per(float64(u.Decisions)), 1)}, Cell{Text: fnum(fb, 3)}, Cell{Text: fnum(per(float64(u.LLMCalls)), 1)},
			Cell{Text: fnum(per(float64(u.PromptTokens)), 0)}, Cell{Text: fnum(per(float64(u.CompletionTokens)), 0)},
			Cell{Text: fnum(lat, 1)}, Cell{Text: fnum(retries, 2)}, Cell{Text: fnum(cached, 3)})
		csv = append(csv, l.g.paradigm, l.role, strconv.Itoa(l.episodes), fcsv(per(float64(u.Decisions))), fcsv(fb), fcsv(per(float64(u.LLMCalls))),
			fcsv(per(float64(u.PromptTokens))), fcsv(per(float64(u.CompletionTokens))), fcsv(per(float64(u.PromptCachedTokens))),
			strconv.Itoa(l.timed), fcsv(lat), fcsv(maxLat), fcsv(retries), fcsv(cached))
		t.Rows = append(t.Rows, row)
		sec.CSVRows = append(sec.CSVRows, csv)
	}
	sec.Tables = []Table{t}
	return sec
}
