package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A reply that turns.jsonl keeps cut (its whole text in the run's reply
// store) is exported as kept, with a note giving its length, hash and
// where the whole is, as des's cut replies are.
func TestSiloLongReplyExportedCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turns.jsonl")
	head := strings.Repeat("a", 4096)
	sum := strings.Repeat("ab", 32)
	line := `{"round":1,"agent":0,"input":[],"context":{"messages":2,"chars":0,"dropped_turns":0},"reply":"` + head +
		`","raw_len":3145728,"raw_sha256":"` + sum + `","raw_truncated":true,"calls":[],"dropped":0,"outcome":"no_tool_call","usage":{"prompt_tokens":1,"completion_tokens":1}}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs, err := siloTurns(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "[coordbench: cut at 4096 bytes of 3145728; SHA-256 of the whole " + sum + ", in replies/ of the run]"
	if len(msgs) != 1 || !strings.Contains(msgs[0].Content, head+"\n"+want) {
		t.Errorf("exported reply: %.200q…", msgs)
	}
}
