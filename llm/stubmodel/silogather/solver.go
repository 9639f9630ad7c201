package silogather

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/silo/pyvalue"
	"github.com/coordbench/coordbench/silo/task"
)

var (
	titleRE     = regexp.MustCompile(`(?m)^\*\*Task: (.+?)\*\*[ \t]*$`)
	centroidsRE = regexp.MustCompile(`(?m)The initial centroids, in order [0-9, ]+, are: (.+)$`)
)

// PromptTask identifies the task of a prompt by its bold title
// ("**Task: Global Max**", the task's Name).
func PromptTask(prompt string) (*task.Task, error) {
	m := titleRE.FindStringSubmatch(prompt)
	if m == nil {
		return nil, fmt.Errorf("gather: no \"**Task: …**\" title in the prompt")
	}
	name := strings.TrimSpace(m[1])
	for _, t := range task.All() {
		if strings.EqualFold(t.Name, name) {
			return t, nil
		}
	}
	return nil, fmt.Errorf("gather: unknown task %q", name)
}

// PromptSolver is a Model.Solve that needs nothing but the text: it finds
// the task by the prompt's title, reads each shard text back from Python's
// str() form (pyvalue.ParseLiteral; a text that is not a list or dict
// literal is a string shard, shown without quotes), reads the parameters
// that only the description states (III-25's initial centroids) from the
// prompt, and calls task.SolveScaled (at the team size the description
// states, for a merged baseline's single agent). It understands the prompts this project
// generates; imported task files with other wording may not be recognised,
// which gives an error (and a failed run), never a guess.
func PromptSolver(taskPrompt string, shardTexts []string) ([]json.RawMessage, error) {
	t, err := PromptTask(taskPrompt)
	if err != nil {
		return nil, err
	}
	shards := make([]json.RawMessage, len(shardTexts))
	for i, text := range shardTexts {
		shards[i], err = shardJSON(text)
		if err != nil {
			return nil, fmt.Errorf("gather: shard of agent %d: %w", i, err)
		}
	}
	var params json.RawMessage
	if t.ID == "III-25" {
		m := centroidsRE.FindStringSubmatch(taskPrompt)
		if m == nil {
			return nil, fmt.Errorf("gather: %s: no initial centroids in the prompt", t.ID)
		}
		if params, err = pyvalue.ParseLiteral(strings.TrimSpace(m[1])); err != nil {
			return nil, fmt.Errorf("gather: %s: initial centroids: %w", t.ID, err)
		}
	}
	return task.SolveScaled(t, shards, params, promptScale(t, taskPrompt))
}

// scaleRE finds, for the tasks that take a problem size from the team size
// (task.SolveScaled), that size in the description, and per is what one
// agent's worth of data adds to it.
var scaleRE = map[string]struct {
	re  *regexp.Regexp
	per int
}{
	"III-23": {regexp.MustCompile(`graph with (\d+) nodes`), 10},
	"III-24": {regexp.MustCompile(`graph with (\d+) nodes`), 8},
	"III-28": {regexp.MustCompile(`graph with (\d+) nodes`), 8},
	"III-29": {regexp.MustCompile(` on (\d+) machines`), 1},
	"III-30": {regexp.MustCompile(`Multiply two (\d+)×`), 1},
}

// promptScale is the team size a prompt's data were drawn for (a merged
// baseline's single agent holds the data of k agents), 0 when the prompt
// does not say.
func promptScale(t *task.Task, prompt string) int {
	s, ok := scaleRE[t.ID]
	if !ok {
		return 0
	}
	m := s.re.FindStringSubmatch(prompt)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n%s.per != 0 {
		return 0
	}
	return n / s.per
}

// shardJSON reads a shard text: a list or dict literal, or else the text
// of a string shard.
func shardJSON(text string) (json.RawMessage, error) {
	raw, err := pyvalue.ParseLiteral(text)
	if err == nil && len(raw) > 0 && (raw[0] == '[' || raw[0] == '{') {
		return raw, nil
	}
	if strings.HasPrefix(strings.TrimSpace(text), "[") || strings.HasPrefix(strings.TrimSpace(text), "{") {
		return nil, err // looked like a container but did not parse
	}
	return json.Marshal(text)
}
