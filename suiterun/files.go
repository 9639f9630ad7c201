package suiterun

import (
	"bytes"
	"path/filepath"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// File is one of a suite's summary files.
type File struct {
	Name string // base name in the suite directory
	Data []byte
}

// WriteFiles writes each file into dir through a temporary name and a
// rename, so that a reader never sees a partial summary.
func WriteFiles(dir string, files ...File) error {
	for _, f := range files {
		if err := atomicfs.WriteFile(filepath.Join(dir, f.Name), TmpPrefix, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// CSV encodes a header and its rows as CSV (RFC 4180, "\n" line ends),
// each cell through untrusted.CSVCell: a text a spreadsheet would run as
// a formula gets a quote in front (readers take it off with
// untrusted.CSVValue).
func CSV(head []string, rows [][]string) []byte {
	var b bytes.Buffer
	w := untrusted.NewCSVWriter(&b)
	w.Write(head)
	w.WriteAll(rows) // into memory: cannot fail
	return b.Bytes()
}
