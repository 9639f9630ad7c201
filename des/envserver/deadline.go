package envserver

import (
	"net/http"
	"time"
)

// A response is written under a deadline renewed at every write: a client
// that stops reading (in the middle of an artifact download, say) blocks
// the write once the socket buffers are full, the deadline passes, the
// write fails, the handler returns and net/http closes the connection. A
// fixed deadline per request (http.Server.WriteTimeout) would cut long
// polls and slow but steady downloads; this one only cuts writes that make
// no progress for Config.WriteTimeout.

// writeChunk is the most one write sends under one deadline: a large
// payload goes out in pieces, each given the whole WriteTimeout.
const writeChunk = 64 << 10

// writeDeadline serves next with a deadlineWriter. The connection's
// deadline is lifted first: the last response on a kept-alive connection
// left one, which must not cut this request's wait (a long poll).
func (s *Server) writeDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetWriteDeadline(time.Time{})
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: rc, timeout: s.cfg.WriteTimeout}, r)
	})
}

// deadlineWriter renews the connection's write deadline before each
// write.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *deadlineWriter) renew() { w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) }

func (w *deadlineWriter) WriteHeader(code int) {
	w.renew()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	if len(p) == 0 { // still sends the header, as the ResponseWriter's does
		w.renew()
		return w.ResponseWriter.Write(p)
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), writeChunk)
		w.renew()
		m, err := w.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// Unwrap lets http.NewResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
