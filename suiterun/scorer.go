package suiterun

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Unrecorded is the scorer version of a suite whose configuration records
// none (written before scorer versions were recorded).
const Unrecorded = "unrecorded"

// SameScorer refuses the suite directory dir when its configuration
// (configFile, key "scorer") records another scorer version than version,
// or none: its cases were scored under other rules, and resuming it would
// mix them with new ones; rescore (the command named) brings it to this
// version first. A directory without the configuration is fine, and so
// is one whose configuration does not parse (the configuration check
// says what is wrong with it).
func SameScorer(dir, configFile, version, rescore string) error {
	b, err := os.ReadFile(filepath.Join(dir, configFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var cfg struct {
		Scorer string `json:"scorer"`
	}
	if json.Unmarshal(b, &cfg) != nil {
		return nil
	}
	if got := cmp.Or(cfg.Scorer, Unrecorded); got != version {
		return fmt.Errorf("%s holds a suite scored under scorer %s, this build scores under %s: run `%s %s` first, then resume it (or use a new directory)",
			dir, got, version, rescore, dir)
	}
	return nil
}
