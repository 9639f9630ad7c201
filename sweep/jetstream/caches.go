package jetstream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/coordbench/coordbench/llm"
)

// MergedCache is the response cache, in a served directory, that the
// cases' own caches are merged into.
const MergedCache = "llm_cache.db"

// MergeCaseCaches merges the per-case caches in dir/caches into
// dir/llm_cache.db (MergedCache), and returns how many there were.
func MergeCaseCaches(ctx context.Context, dir string) (int, error) {
	files, err := caseCaches(dir)
	if err != nil || len(files) == 0 {
		return 0, err
	}
	return len(files), mergeInto(ctx, filepath.Join(dir, MergedCache), files)
}

// CollectCaches merges into out/llm_cache.db the response caches of the
// directories sweep collect merges (a served directory's merged cache and
// per-case caches), so that the collected experiment replays offline;
// it returns how many cache files it merged.
func CollectCaches(ctx context.Context, dirs []string, out string) (int, error) {
	var files []string
	for _, d := range dirs {
		if m := filepath.Join(d, MergedCache); fileExists(m) {
			files = append(files, m)
		}
		fs, err := caseCaches(d)
		if err != nil {
			return 0, err
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return 0, nil
	}
	return len(files), mergeInto(ctx, filepath.Join(out, MergedCache), files)
}

// caseCaches are the per-case cache files of a served directory.
func caseCaches(dir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(dir, CachesDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".db") && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, filepath.Join(dir, CachesDir, e.Name()))
		}
	}
	return files, nil
}

// mergeInto merges the cache files into the cache at dst.
func mergeInto(ctx context.Context, dst string, files []string) error {
	c, err := llm.OpenCache(dst)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, f := range files {
		if _, err := c.Merge(ctx, f); err != nil {
			return err
		}
	}
	return nil
}
