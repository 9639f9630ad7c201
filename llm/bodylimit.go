package llm

import (
	"fmt"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/option"
)

// MaxResponseBytes bounds the body of one chat-completion response. A
// completion of the longest context any current model offers is well under
// a MiB; a larger body is an endpoint that lies or loops, and reading it
// whole would let it exhaust memory (and, in SILO-BENCH, where a turn has
// no call cap by default, feed an unbounded number of tool calls). Reading
// past the bound fails the attempt as an unreadable body (class
// bad_response, retried like one).
const MaxResponseBytes = 8 << 20

// limitBodies is the client middleware that applies MaxResponseBytes.
func limitBodies(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res != nil && res.Body != nil {
		res.Body = &limitedBody{r: res.Body, left: MaxResponseBytes}
	}
	return res, err
}

// limitedBody reads at most left bytes of r, then fails.
type limitedBody struct {
	r    io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("response body exceeds %d bytes", MaxResponseBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.r.Close() }
