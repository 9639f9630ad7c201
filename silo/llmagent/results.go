package llmagent

// How a tool result is written into the text the model reads back.

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// ResultEncoding is how tool results are written for the model
// (Config.ResultEncoding, docs/silo-llm.md).
type ResultEncoding string

const (
	// ResultsPublished writes a result as the published code does,
	// srsly.json_dumps (ujson): compact, every non-ASCII character as a
	// \u escape, floats in ujson's form (pyvalue.EncodeUJSON). The
	// default.
	ResultsPublished ResultEncoding = "published"
	// ResultsCompact writes a result as compact UTF-8 JSON, non-ASCII
	// characters as they are (how results were written before issue 27).
	ResultsCompact ResultEncoding = "compact"
)

// ParseResultEncoding checks an encoding name ("" is ResultsPublished).
func ParseResultEncoding(s string) (ResultEncoding, error) {
	switch ResultEncoding(s) {
	case "", ResultsPublished:
		return ResultsPublished, nil
	case ResultsCompact:
		return ResultsCompact, nil
	}
	return "", fmt.Errorf("tool-result encoding %q: want published (srsly/ujson, as published) or compact (UTF-8)", s)
}

// Encode returns the text of result in encoding e: "null" for an empty
// result, and the result's own bytes, trimmed, if it is not JSON.
func (e ResultEncoding) Encode(result json.RawMessage) string {
	if e != ResultsCompact {
		if v, err := pyvalue.ParseJSON(result); err == nil {
			return string(pyvalue.EncodeUJSON(v))
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, result) != nil {
		buf.Reset()
		buf.Write(bytes.TrimSpace(result))
	}
	if buf.Len() == 0 {
		return "null"
	}
	return buf.String()
}

// FormatToolResult renders one executed call as the block the model reads
// back: the tool name and its result in encoding e.
func FormatToolResult(name string, result json.RawMessage, e ResultEncoding) string {
	return "<tool_result>\n<tool>" + name + "</tool>\n<result>" + e.Encode(result) + "</result>\n</tool_result>"
}
