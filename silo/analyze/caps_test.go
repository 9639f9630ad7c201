package analyze

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/proto"
)

// silo analyze reads a run's files within bounds (issue 31 item 4): a turn
// log over maxTurnsBytes and a result.json over maxResultBytes are each
// refused before they are read, with an error naming the file and the
// bound.
func TestAnalyzeCapsWhatItReads(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int64
	}{
		{FileTurnsLog, maxTurnsBytes + 1},
		{play.FileResult, maxResultBytes + 1},
	} {
		dir := craft(t, filepath.Join(t.TempDir(), "r"), proto.P2P, [][]call{{send(1, 0)}}, plainAgents(2))
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, tc.size); err != nil { // sparse: no disk used
			t.Fatal(err)
		}
		want := tc.name + " is larger than the limit of " + strconv.FormatInt(tc.size-1, 10) + " bytes"
		if _, err := Analyze(dir, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s of %d bytes: %v, want %q", tc.name, tc.size, err, want)
		}
	}
}
