package stubmodel

import (
	"net/http"
	"sync/atomic"
	"time"
)

// Handler serves the chat-completions protocol with handler as a plain
// http.Handler, for any http.Server (a stub model outside tests, such as
// coordbench llm stub). Requests are decoded and normal replies encoded
// exactly as by [NewServer], and ChatRequest.Seq counts the requests this
// handler has received; but nothing is logged, so it can serve for as long
// as needed. A nil handler is [Echo].
//
// Reply.Delay, FaultNone, FaultStatus and FaultRaw are served as by a
// Server. The other faults are test devices that belong to a Server: here
// they are answered with a 500 error naming the fault.
func Handler(handler func(ChatRequest) Reply) http.Handler {
	if handler == nil {
		handler = Echo
	}
	var seq atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := decode(r, time.Now())
		req.Seq = int(seq.Add(1) - 1)
		if req.DecodeError != "" {
			writeError(w, http.StatusBadRequest, req.DecodeError, "")
			return
		}
		reply := handler(req)
		if reply.Delay > 0 {
			t := time.NewTimer(reply.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		switch reply.Fault {
		case FaultNone:
			body, _ := completionBody(req, reply)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		case FaultStatus:
			writeError(w, reply.Status, reply.Message, reply.RetryAfter)
		case FaultRaw:
			writeRawReply(w, reply)
		default:
			writeError(w, http.StatusInternalServerError, "stubmodel: Handler does not inject fault "+string(reply.Fault)+" (use NewServer)", "")
		}
	})
}
