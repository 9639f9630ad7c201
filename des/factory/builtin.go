package factory

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed instances/*.yaml
var builtinFS embed.FS

// BuiltinNames lists the reported instances embedded in the binary.
func BuiltinNames() []string {
	entries, _ := builtinFS.ReadDir("instances")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// BuiltinSource returns the YAML text of a reported instance.
func BuiltinSource(name string) ([]byte, error) {
	data, err := builtinFS.ReadFile("instances/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown instance %q (reported: %s; or give a file path or gen:A<areas>C<cells>)",
			name, strings.Join(BuiltinNames(), ", "))
	}
	return data, nil
}

// Resolve loads an instance by reference within the default limits (see
// SizeLimits.Resolve).
func Resolve(ref string) (*Instance, error) { return DefaultSizeLimits().Resolve(ref) }

// Resolve loads an instance by reference: a reported instance name, a
// generator spec ("gen:A16C64", see ParseGenSpec), or a file path; its
// plant must be within l.
func (l SizeLimits) Resolve(ref string) (*Instance, error) {
	if strings.HasPrefix(ref, "gen:") {
		spec, err := ParseGenSpec(ref)
		if err != nil {
			return nil, err
		}
		return l.Generate(spec)
	}
	if data, err := BuiltinSource(ref); err == nil {
		return l.Parse(ref+".yaml", data)
	}
	_, err := os.Stat(ref)
	switch {
	case err == nil:
		return l.LoadFile(ref)
	case looksLikePath(ref) && errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("instance file %s: %w (a reported instance is one of %s; a generated plant is gen:A<areas>C<cells>)",
			ref, os.ErrNotExist, strings.Join(BuiltinNames(), ", "))
	case looksLikePath(ref):
		return nil, fmt.Errorf("instance file %s: %w", ref, err)
	}
	_, err = BuiltinSource(ref)
	return nil, err
}

// looksLikePath reports whether ref names a file rather than a reported
// instance: it has a directory or an instance file's extension.
func looksLikePath(ref string) bool {
	if strings.ContainsAny(ref, `/\`) {
		return true
	}
	switch strings.ToLower(filepath.Ext(ref)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
