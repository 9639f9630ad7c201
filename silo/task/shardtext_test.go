package task

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

// semantic decodes JSON with exact numbers.
func semantic(t *testing.T, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// TestShardTextRoundTrip: every task's shard text, parsed back, is the
// stored JSON shard. String shards are shown without quotes (str()); their
// repr() is parsed instead.
func TestShardTextRoundTrip(t *testing.T) {
	for _, tk := range All() {
		for _, n := range []int{1, 2, 5} {
			in, err := Seeded(tk.ID, n, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				text := in.ShardText(i)
				if s, ok := in.typedShard(i).(string); ok {
					if text != s {
						t.Fatalf("%s n=%d agent %d: str() of a string shard is not the string", tk.ID, n, i)
					}
					text = pyvalue.Repr(s)
				}
				got, err := pyvalue.ParseLiteral(text)
				if err != nil {
					t.Fatalf("%s n=%d agent %d: %v\n%s", tk.ID, n, i, err, text)
				}
				if !reflect.DeepEqual(semantic(t, got), semantic(t, in.Shards[i])) {
					t.Fatalf("%s n=%d agent %d:\n got %s\nwant %s", tk.ID, n, i, got, in.Shards[i])
				}
				if !bytes.Equal(got, in.Shards[i]) {
					t.Errorf("%s n=%d agent %d: not byte-identical:\n got %s\nwant %s", tk.ID, n, i, got, in.Shards[i])
				}
			}
		}
	}
}

func TestParamsTextRoundTrip(t *testing.T) {
	in, err := Seeded("III-25", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pyvalue.ParseLiteral(pyvalue.Str(in.params))
	if err != nil || !bytes.Equal(got, in.Params) {
		t.Fatalf("params: %s, %v; want %s", got, err, in.Params)
	}
}
