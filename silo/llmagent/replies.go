package llmagent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/internal/untrusted"
	"github.com/coordbench/coordbench/llm"
)

// The reply store: a model's reply is written once, and bounded. The turn
// log (and its copy in the run database) keeps a reply text, or the
// arguments of one of its native tool calls, whole when it is at most
// MaxInlineReply bytes; a longer one keeps its first MaxInlineReply bytes
// with raw_len, raw_sha256 and raw_truncated (the convention of des's
// decisions.jsonl), and its whole text goes to the run directory's reply
// store: DirReplies/<hex SHA-256 of the text>, the raw bytes, written once
// however many turns refer to it. A reply of B bytes thus costs B plus
// MaxInlineReply and a few hundred bytes of record. The hash always covers
// the whole text.
const (
	// DirReplies is the reply store's directory in a run directory.
	DirReplies = "replies"
	// MaxInlineReply is the longest reply text a turn record holds whole
	// (untrusted.MaxReply, as des's audit).
	MaxInlineReply = untrusted.MaxReply
	// MaxStoredReply bounds one text of the reply store:
	// llm.MaxResponseBytes, the largest response body the model client
	// accepts, so every reply it returns is stored whole. A longer text
	// (from another Model) keeps only its head, length and hash: the
	// requests after it cannot be rebuilt exactly.
	MaxStoredReply = llm.MaxResponseBytes
)

// RawText describes a model text the turn log holds only in part: its
// first MaxInlineReply bytes are in the record; Len and SHA256 are those
// of the whole text, which is in the reply store unless Len is over
// MaxStoredReply. All zero for a text held whole.
type RawText struct {
	Len       int    `json:"raw_len,omitempty"`
	SHA256    string `json:"raw_sha256,omitempty"`
	Truncated bool   `json:"raw_truncated,omitempty"`
}

// Note is what a reader appends to the kept part of a cut text (kept
// bytes of it): where the whole is. "" for a text held whole.
func (r RawText) Note(kept int) string {
	if !r.Truncated {
		return ""
	}
	return fmt.Sprintf("\n[coordbench: cut at %d bytes of %d; SHA-256 of the whole %s, in %s/ of the run]", kept, r.Len, r.SHA256, DirReplies)
}

// ReplyCall is a native tool call of a reply as the turn log keeps it:
// Arguments cut like the reply text (RawText).
type ReplyCall struct {
	llm.ToolCall
	RawText
}

// ToolCalls returns the calls as the model client's tool calls.
func ToolCalls(cs []ReplyCall) []llm.ToolCall {
	if cs == nil {
		return nil
	}
	out := make([]llm.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = c.ToolCall
	}
	return out
}

// replyCalls wraps the model client's tool calls for a record.
func replyCalls(cs []llm.ToolCall) []ReplyCall {
	if cs == nil {
		return nil
	}
	out := make([]ReplyCall, len(cs))
	for i, c := range cs {
		out[i].ToolCall = c
	}
	return out
}

// body is a whole text for the reply store, named by its hex SHA-256.
type body struct{ sum, text string }

// clip cuts s for the turn log: the text it keeps, what describes the
// whole, and the whole when it goes to the reply store (sum "" otherwise).
// A text already cut (raw set: a record read back) is kept as it is.
func clip(s string, raw RawText) (string, RawText, body) {
	if raw.Truncated {
		return s, raw, body{}
	}
	c := untrusted.Clip(s, MaxInlineReply)
	if !c.Truncated {
		return s, RawText{}, body{}
	}
	var b body
	if len(s) <= MaxStoredReply {
		b = body{c.SHA256, s}
	}
	return c.Text, RawText{Len: c.Len, SHA256: c.SHA256, Truncated: true}, b
}

// stored returns the record as the turn log keeps it (reply text and tool
// call arguments cut, see RawText) and the whole texts that go to the
// reply store.
func (r *TurnRecord) stored() (TurnRecord, []body) {
	s := *r
	var bodies []body
	keep := func(b body) {
		if b.sum != "" {
			bodies = append(bodies, b)
		}
	}
	var b body
	s.Reply, s.RawText, b = clip(r.Reply, r.RawText)
	keep(b)
	if len(r.ReplyToolCalls) > 0 {
		s.ReplyToolCalls = make([]ReplyCall, len(r.ReplyToolCalls))
		for i, c := range r.ReplyToolCalls {
			s.ReplyToolCalls[i] = c
			s.ReplyToolCalls[i].Arguments, s.ReplyToolCalls[i].RawText, b = clip(c.Arguments, c.RawText)
			keep(b)
		}
	}
	copied := false
	for i, c := range r.Calls {
		if len(c.Args) <= MaxLoggedArgs {
			continue
		}
		if !copied { // the record's calls are not the caller's to change
			s.Calls, copied = append([]CallRecord(nil), r.Calls...), true
		}
		s.Calls[i].Args = oversizedArgs(len(c.Args))
	}
	return s, bodies
}

// MaxLoggedArgs bounds the arguments of a call as its CallRecord keeps
// them: the protocol's default bound on a call's arguments (proto.Options
// MaxArgsBytes, 2×64 KiB + 4 KiB). Longer ones are logged as
// {"oversized_args_bytes": n}, as the protocol's call log does: they are
// part of the reply, which the log keeps once (the reply store).
const MaxLoggedArgs = 2*(64<<10) + 4096

func oversizedArgs(n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"oversized_args_bytes":%d}`, n))
}

// putReplies writes bodies into the reply store of the run directory
// dir, each unless it is there already (a file appears whole, through a
// rename).
func putReplies(dir string, bodies []body) error {
	store := filepath.Join(dir, DirReplies)
	for _, b := range bodies {
		path := filepath.Join(store, b.sum)
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := os.MkdirAll(store, 0o755); err != nil {
			return fmt.Errorf("reply store: %w", err)
		}
		if err := atomicfs.WriteFile(path, ".tmp-", []byte(b.text)); err != nil {
			return fmt.Errorf("reply store: %w", err)
		}
	}
	return nil
}

// ErrReplyNotStored is returned (wrapped) by LoadReplies for a text the
// run did not store whole: over MaxStoredReply, or missing from the store.
var ErrReplyNotStored = errors.New("reply not in the reply store")

// loadText returns the whole text that raw describes, from the reply
// store of dir, checked against its length and hash.
func loadText(dir string, raw RawText) (string, error) {
	if raw.Len > MaxStoredReply {
		return "", fmt.Errorf("%w: %d bytes, over the store's cap of %d bytes; only its first %d bytes and its SHA-256 %s were kept",
			ErrReplyNotStored, raw.Len, MaxStoredReply, MaxInlineReply, raw.SHA256)
	}
	if len(raw.SHA256) != 2*sha256.Size || strings.Trim(raw.SHA256, "0123456789abcdef") != "" {
		return "", fmt.Errorf("raw_sha256 %q is not a hex SHA-256", untrusted.OneLine(raw.SHA256, 80))
	}
	path := filepath.Join(dir, DirReplies, raw.SHA256)
	b, err := inputfile.Read(path, "stored reply", MaxStoredReply)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s is missing (the run directory is incomplete)", ErrReplyNotStored, filepath.Join(DirReplies, raw.SHA256))
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	if len(b) != raw.Len || hex.EncodeToString(sum[:]) != raw.SHA256 {
		return "", fmt.Errorf("%s: %d bytes that do not match raw_len %d and raw_sha256 (the store was altered)", path, len(b), raw.Len)
	}
	return string(b), nil
}

// LoadReplies replaces, in recs read from the turn log of the run
// directory dir, every cut reply text and tool-call argument (RawText)
// by the whole text from the reply store, checked against its length and
// hash. Turn logs from before the store held every reply whole: their
// records are left as they are.
func LoadReplies(dir string, recs []TurnRecord) error {
	for i := range recs {
		r := &recs[i]
		if r.RawText.Truncated {
			text, err := loadText(dir, r.RawText)
			if err != nil {
				return fmt.Errorf("agent %d round %d reply: %w", r.Agent, r.Round, err)
			}
			r.Reply, r.RawText = text, RawText{}
		}
		for k := range r.ReplyToolCalls {
			c := &r.ReplyToolCalls[k]
			if !c.Truncated {
				continue
			}
			text, err := loadText(dir, c.RawText)
			if err != nil {
				return fmt.Errorf("agent %d round %d tool call %d arguments: %w", r.Agent, r.Round, k, err)
			}
			c.Arguments, c.RawText = text, RawText{}
		}
	}
	return nil
}
