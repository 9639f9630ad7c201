package coord

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/coordbench/coordbench/internal/inputfile"
)

// maxParadigmFile bounds the size of a paradigm file, in bytes: a paradigm
// is a few switches and a description.
const maxParadigmFile = 64 << 10

// AddFile reads a paradigm from a YAML (or JSON) file with the keys of
// AuthorityMode (mode_id, routing_authority_mode, ...), validates it and
// adds it to the set. A definition the set already holds unchanged (a
// built-in's, or one added before, as when a suite is resumed with the
// same paradigm file) is not an error; a different definition under a
// taken id is.
func (p *Paradigms) AddFile(path string) (AuthorityMode, error) {
	data, err := inputfile.Read(path, "paradigm file", maxParadigmFile)
	if err != nil {
		return AuthorityMode{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m AuthorityMode
	if err := dec.Decode(&m); err != nil {
		return AuthorityMode{}, fmt.Errorf("%s: %v", path, err)
	}
	if prev, err := p.Lookup(m.ID); err == nil {
		if prev == m {
			return m, nil
		}
		return AuthorityMode{}, fmt.Errorf("%s: paradigm %q is already registered with other settings", path, m.ID)
	}
	if err := p.Add(m); err != nil {
		return AuthorityMode{}, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}
