package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/suite"
)

// TestSiloModels: a silo suite with mixed teams (its aggregate_models.csv)
// gets a section by model, in every format and in the HTML page, and one
// without a team none; a malformed file is an error naming its line.
func TestSiloModels(t *testing.T) {
	_, silo := suites(t)
	dir := filepath.Join(t.TempDir(), "team")
	if err := os.CopyFS(dir, os.DirFS(silo)); err != nil {
		t.Fatal(err)
	}
	head := strings.Join(suite.AggregateModelsHeader(), ",")
	rows := head + "\n" +
		"llm-mix-a=1-b=1,a,I,4,p2p,2,2,1.0000,1.0000,1.0000,1.0000,0.1667,3.0,4.0,2000.5,60.0,0.0000,0.0000,0.0000,0.0000\n" +
		"llm-mix-a=1-b=1,b,I,4,p2p,2,2,0.0000,0.0000,0.2500,0.2500,0.0833,1.0,2.0,1100.0,45.0,1.0000,0.5000,0.0000,0.0000\n"
	if err := os.WriteFile(filepath.Join(dir, suite.FileAggregateModels), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	secs, err := Build([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 3 || secs[2].Kind != SectionSiloModels || len(secs[2].CSVRows) != 2 || secs[2].CSVRows[1][1] != "b" ||
		secs[2].CSVRows[1][len(secs[2].CSVRows[1])-4] != "1" {
		t.Fatalf("sections %d, last %+v", len(secs), secs[len(secs)-1])
	}
	var md bytes.Buffer
	if err := Write(&md, []string{dir}, Options{Format: "md", Tables: []string{SectionSiloModels}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "mixed teams by model") || !strings.Contains(md.String(), "| llm-mix-a=1-b=1 | b ") {
		t.Errorf("md:\n%s", md.String())
	}
	var page bytes.Buffer
	if err := Write(&page, []string{dir}, Options{Format: "html"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "Mixed teams by model") {
		t.Error("the HTML page has no section by model")
	}
	if secs, err := Build([]string{silo}); err != nil || len(secs) != 2 {
		t.Errorf("a suite without teams: %d sections, %v", len(secs), err)
	}
	bad := head + "\nt,a,IV,4,p2p,2,2,1,1,1,1,0,0,0,0,0,0,0,0,0\n"
	if err := os.WriteFile(filepath.Join(dir, suite.FileAggregateModels), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build([]string{dir}); err == nil || !strings.Contains(err.Error(), "aggregate_models.csv:2: column level") {
		t.Errorf("malformed: %v", err)
	}
}
