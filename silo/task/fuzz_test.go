package task

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseFile: ParseFile never panics; a refusal is a *FileError naming
// the file and nothing else; an accepted file has one shard and one
// answer per agent, no bigger than the file allows, and writes back
// (MarshalFile) to bytes that read as the same instance and write back to
// themselves. Seeds: testdata/fuzz/FuzzParseFile (a published-style file,
// minimal files of several tasks and shapes, and malformed ones).
func FuzzParseFile(f *testing.F) {
	const path = "fuzz/I-01_n2.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseFile(path, data)
		if err != nil {
			var fe *FileError
			if in != nil || !errors.As(err, &fe) || fe.Path != path {
				t.Fatalf("ParseFile(%q) = %v, %v: want nil and a *FileError naming %s", data, in, err, path)
			}
			return
		}
		if in.N < 1 || len(in.Shards) != in.N || len(in.Expected) != in.N || in.N > len(data) {
			t.Fatalf("ParseFile(%q): N %d with %d shards and %d answers", data, in.N, len(in.Shards), len(in.Expected))
		}
		size := 0
		for i := range in.N {
			size += len(in.Shards[i]) + len(in.Expected[i])
		}
		if size > 12*len(data)+16 {
			t.Fatalf("ParseFile(%q): %d bytes of shards and answers from a file of %d", data, size, len(data))
		}
		out, err := in.MarshalFile()
		if err != nil {
			t.Fatalf("ParseFile(%q) loaded an instance MarshalFile refuses: %v", data, err)
		}
		again, err := ParseFile(path, out)
		if err != nil {
			t.Fatalf("ParseFile(%q) wrote back %q, which does not load: %v", data, out, err)
		}
		if again.Task != in.Task || again.N != in.N || again.Template != in.Template {
			t.Fatalf("ParseFile(%q): written back as task %s, N %d, template %q; want %s, %d, %q", data, again.Task.ID, again.N, again.Template, in.Task.ID, in.N, in.Template)
		}
		for i := range in.N {
			if !bytes.Equal(again.Shards[i], in.Shards[i]) || !bytes.Equal(again.Expected[i], in.Expected[i]) {
				t.Fatalf("ParseFile(%q): agent %d written back as %s / %s, want %s / %s", data, i, again.Shards[i], again.Expected[i], in.Shards[i], in.Expected[i])
			}
		}
		if out2, err := again.MarshalFile(); err != nil || !bytes.Equal(out2, out) {
			t.Fatalf("ParseFile(%q): MarshalFile is not a fixed point: %q then %q (%v)", data, out, out2, err)
		}
	})
}
