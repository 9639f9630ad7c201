package transcript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/silo/llmagent"
	"github.com/coordbench/coordbench/silo/round"
)

// requestOf finds the request settings of the agent whose turn records
// are recs: the only model's, or in a mixed team its model's.
func requestOf(qs []round.RequestSettings, recs []llmagent.TurnRecord) (round.RequestSettings, bool) {
	if len(qs) == 1 && qs[0].Model == "" {
		return qs[0], true
	}
	if len(recs) == 0 {
		return round.RequestSettings{}, false
	}
	for _, q := range qs {
		if q.Model == recs[0].Model {
			return q, true
		}
	}
	return round.RequestSettings{}, false
}

// WriteRequest prints the exact messages agent sent to the model in its
// call of round r (Request): one block per message with its role, tool
// calls and answered call id. Contents are clipped to opt.Width unless
// opt.Full.
func WriteRequest(w io.Writer, dir string, agent, r int, opt Options) error {
	if opt.Width <= 0 {
		opt.Width = DefaultWidth
	}
	recs, msgs, err := request(dir, agent, r)
	if err != nil {
		return err
	}
	res, err := readResult(filepath.Join(dir, FileResult))
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	p := &printer{w: bw, opt: opt}
	p.printf("agent %d, round %d (rounds numbered from 1): %d messages sent\n", agent, r, len(msgs))
	if q, ok := requestOf(res.Requests, recs); ok {
		p.printf("with %s\n", requestLine(q))
	} else {
		p.printf("with settings not recorded (a run from before result.json held them)\n")
	}
	for k, m := range msgs {
		head := fmt.Sprintf("[%d %s", k, m.Role)
		if m.ToolCallID != "" {
			head += " for " + m.ToolCallID
		}
		p.block(head+"] ", m.Content)
		for _, c := range m.ToolCalls {
			p.printf("    call %s %s(%s)\n", c.ID, c.Name, p.clip(c.Arguments))
		}
	}
	return bw.Flush()
}

// Request rebuilds the exact messages agent sent to the model in its call
// of round r from the run directory dir: its turn log (FileTurns), the
// long replies whole from the reply store (llmagent.LoadReplies), put
// together by llmagent.Conversation.
func Request(dir string, agent, r int) ([]llm.Message, error) {
	_, msgs, err := request(dir, agent, r)
	return msgs, err
}

// request is Request, also returning the agent's turn records up to round
// r (their model names the request settings of a mixed team).
func request(dir string, agent, r int) ([]llmagent.TurnRecord, []llm.Message, error) {
	path := filepath.Join(dir, FileTurns)
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("%s: %w (the full request exists only for LLM runs)", path, err)
	}
	var recs []llmagent.TurnRecord
	err := scanJSONL(path, func(line []byte) (bool, error) {
		var t llmagent.TurnRecord
		if err := json.Unmarshal(line, &t); err != nil {
			return false, err
		}
		if t.Round > r {
			return true, nil
		}
		if t.Agent == agent {
			recs = append(recs, t)
		}
		return false, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if err := llmagent.LoadReplies(dir, recs); err != nil { // long replies are whole in the reply store only
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	msgs, err := llmagent.Conversation(recs, agent, r)
	return recs, msgs, err
}
