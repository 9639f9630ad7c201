package envserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/coordbench/coordbench/des/harness"
)

// The batched endpoints (POST /v1/batch/create, /v1/batch/step,
// /v1/batch/delete) serve vectorized environments: one request acts on
// many episodes, and every item gets its own result, so that one bad item
// does not fail the others. A request holds at most Config.MaxBatch items
// and waits at most Config.LongPoll in all for the decisions it returns.

// BatchCreateRequest is the body of POST /v1/batch/create.
type BatchCreateRequest struct {
	Episodes []CreateRequest `json:"episodes"`
}

// BatchStepItem is one episode's part of POST /v1/batch/step: the
// actions for its pending step, as in POST /v1/episodes/{id}/actions. An
// item without "actions" only asks for the episode's pending decision.
type BatchStepItem struct {
	ID string `json:"id"`
	ActionsRequest
}

// BatchStepRequest is the body of POST /v1/batch/step.
type BatchStepRequest struct {
	Items []BatchStepItem `json:"items"`
}

// BatchDeleteRequest is the body of POST /v1/batch/delete.
type BatchDeleteRequest struct {
	IDs []string `json:"ids"`
}

// BatchResult is one item's result, in the order of the request.
type BatchResult struct {
	// ID is the episode's id (for create: the new episode's, on success).
	ID string `json:"id,omitempty"`
	// Code is the HTTP status the single-episode endpoint would answer:
	// 200 (201 for a create), or the error's. 202: the actions were taken
	// but no decision came within the wait; ask again with an item
	// without actions.
	Code  int    `json:"code"`
	Error string `json:"error,omitempty"`
	// Consumed: the error took the pending decision (its agents fall back).
	Consumed bool `json:"consumed,omitempty"`
	// Problems, for step: the agents whose actions fall back, and why.
	Problems map[string]string `json:"problems,omitempty"`
	// Warnings, for step: what of an agent's answer was ignored without a
	// fallback (ActionsResponse.Warnings).
	Warnings map[string]string `json:"warnings,omitempty"`
	// Episode is the status, for create and delete.
	Episode *Status `json:"episode,omitempty"`
	// Decision is the next pending Decision (payload.md), for create and
	// step, unless the episode has ended.
	Decision json.RawMessage `json:"decision,omitempty"`
	// Progress is the tally at Decision, or at the end.
	Progress *Progress `json:"progress,omitempty"`
	// Done: the episode has ended; Status is metrics.json "status" and
	// Metrics is metrics.json.
	Done    bool             `json:"done,omitempty"`
	Status  string           `json:"status,omitempty"`
	Metrics *harness.Metrics `json:"metrics,omitempty"`
}

// BatchResponse answers every batched endpoint.
type BatchResponse struct {
	Results []BatchResult `json:"results"`
}

// readBatch reads a batch body into v and checks its item count n(v); it
// writes the error itself.
func readBatch[T any](s *Server, w http.ResponseWriter, r *http.Request, n func(*T) int) (*T, bool) {
	b, ok := s.readBody(w, r)
	if !ok {
		return nil, false
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return nil, false
	}
	switch k := n(v); {
	case k == 0:
		writeError(w, http.StatusBadRequest, "an empty batch")
		return nil, false
	case k > s.cfg.MaxBatch:
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%d items in the batch, more than the maximum %d", k, s.cfg.MaxBatch))
		return nil, false
	}
	return v, true
}

// get finds an episode by id and records the client's touch.
func (s *Server) get(id string) *episode {
	s.mu.Lock()
	e := s.eps[id]
	s.mu.Unlock()
	if e != nil {
		e.touch(s.now())
	}
	return e
}

// fill sets the decision or end of an item from n.
func (res *BatchResult) fill(n next) {
	res.Progress = n.progress
	if n.done {
		res.Done, res.Status, res.Metrics = true, n.status, n.metrics
		return
	}
	res.Decision = n.payload
}

func (s *Server) batchCreate(w http.ResponseWriter, r *http.Request) {
	req, ok := readBatch(s, w, r, func(v *BatchCreateRequest) int { return len(v.Episodes) })
	if !ok {
		return
	}
	out := make([]BatchResult, len(req.Episodes))
	eps := make([]*episode, len(req.Episodes))
	for i, cr := range req.Episodes {
		e, aerr := s.start(cr)
		if aerr != nil {
			out[i] = BatchResult{Code: aerr.code, Error: aerr.msg}
			continue
		}
		eps[i] = e
		out[i] = BatchResult{ID: e.id, Code: http.StatusCreated}
	}
	deadline := time.Now().Add(s.cfg.LongPoll)
	for i, e := range eps {
		if e == nil {
			continue
		}
		if n, ok := e.next(r.Context(), -1, deadline); ok {
			out[i].fill(n)
		}
		st := e.status()
		out[i].Episode = &st
	}
	writeJSON(w, http.StatusOK, BatchResponse{Results: out})
}

func (s *Server) batchStep(w http.ResponseWriter, r *http.Request) {
	req, ok := readBatch(s, w, r, func(v *BatchStepRequest) int { return len(v.Items) })
	if !ok {
		return
	}
	out := make([]BatchResult, len(req.Items))
	eps := make([]*episode, len(req.Items))
	after := make([]int, len(req.Items))
	seen := make(map[string]bool, len(req.Items))
	// Deliver every item's actions first, so that all the episodes run
	// on while the replies are collected.
	for i, it := range req.Items {
		out[i] = BatchResult{ID: it.ID, Code: http.StatusOK}
		e := s.get(it.ID)
		switch {
		case e == nil:
			out[i].Code, out[i].Error = http.StatusNotFound, noEpisode(it.ID)
			continue
		case seen[it.ID]:
			out[i].Code, out[i].Error = http.StatusBadRequest, "the episode appears twice in the batch"
			continue
		}
		seen[it.ID] = true
		after[i] = -1
		if it.Actions != nil {
			resp, aerr := e.deliver(&it.ActionsRequest, rawItem(it))
			if aerr != nil {
				out[i].Code, out[i].Error, out[i].Consumed = aerr.code, aerr.msg, aerr.consumed
				continue
			}
			out[i].Problems, out[i].Warnings = resp.Problems, resp.Warnings
			after[i] = resp.Step
		}
		eps[i] = e
	}
	deadline := time.Now().Add(s.cfg.LongPoll)
	for i, e := range eps {
		if e == nil {
			continue
		}
		if n, ok := e.next(r.Context(), after[i], deadline); ok {
			out[i].fill(n)
		} else {
			out[i].Code = http.StatusAccepted
		}
	}
	writeJSON(w, http.StatusOK, BatchResponse{Results: out})
}

// rawItem is the item as the audits record it (raw_reply): its actions
// request, without the id.
func rawItem(it BatchStepItem) []byte {
	b, _ := json.Marshal(it.ActionsRequest)
	return b
}

func (s *Server) batchDelete(w http.ResponseWriter, r *http.Request) {
	req, ok := readBatch(s, w, r, func(v *BatchDeleteRequest) int { return len(v.IDs) })
	if !ok {
		return
	}
	out := make([]BatchResult, len(req.IDs))
	eps := make([]*episode, len(req.IDs))
	seen := make(map[string]bool, len(req.IDs))
	for i, id := range req.IDs {
		out[i] = BatchResult{ID: id, Code: http.StatusOK}
		if seen[id] {
			out[i].Code, out[i].Error = http.StatusBadRequest, "the episode appears twice in the batch"
			continue
		}
		if eps[i] = s.get(id); eps[i] == nil {
			out[i].Code, out[i].Error = http.StatusNotFound, noEpisode(id)
			continue
		}
		seen[id] = true
		eps[i].stop("closed by the client") // all at once: they end concurrently
	}
	for i, e := range eps {
		if e == nil {
			continue
		}
		st, ok := s.remove(r.Context(), e)
		if !ok {
			out[i].Code, out[i].Error = http.StatusServiceUnavailable, "the request ended before the episode did"
			continue
		}
		out[i].Episode = &st
	}
	writeJSON(w, http.StatusOK, BatchResponse{Results: out})
}
