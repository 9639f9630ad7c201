package coord

import (
	"bytes"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// LoadAuthorityModeFile reads a paradigm from a YAML (or JSON) file with the
// keys of AuthorityMode (mode_id, routing_authority_mode, ...), validates it
// and registers it. Registering the same definition twice is not an error,
// so a suite can be resumed with the same paradigm file; a different
// definition under a taken id is.
func LoadAuthorityModeFile(path string) (AuthorityMode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return AuthorityMode{}, fmt.Errorf("read paradigm file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m AuthorityMode
	if err := dec.Decode(&m); err != nil {
		return AuthorityMode{}, fmt.Errorf("%s: %v", path, err)
	}
	if prev, err := LookupAuthorityMode(m.ID); err == nil {
		if prev == m {
			return m, nil
		}
		return AuthorityMode{}, fmt.Errorf("%s: paradigm %q is already registered with other settings", path, m.ID)
	}
	if err := RegisterAuthorityMode(m); err != nil {
		return AuthorityMode{}, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}
