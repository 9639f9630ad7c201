package check

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzTrace feeds arbitrary bytes to the trace checker: it must never
// panic, and it must report a problem for anything but a valid trace.
// Run it with: go test ./des/harness/check -run '^$' -fuzz FuzzTrace
func FuzzTrace(f *testing.F) {
	dir := f.TempDir()
	runDir(f, "A5C12-1", "random", 2, dir)
	valid, err := os.ReadFile(filepath.Join(dir, fileTrace))
	if err != nil {
		f.Fatal(err)
	}
	// Prefixes of a real trace (whole traces make fuzzing crawl).
	lines := bytes.SplitAfter(valid, []byte("\n"))
	f.Add(bytes.Join(lines[:40], nil))
	f.Add(append(bytes.Join(lines[:150], nil), lines[len(lines)-2]...))
	f.Add([]byte(`{"t":0,"ev":"episode_start","instance":"A5C12-1","seed":1,"time_unit_s":1,"power_cap_kw":30,"transport_kw":0.3,"carbon_kg_per_kwh":0.4,"wip_cap":12,"horizon":7200,"jobs":40,"total_ops":252}
{"t":0,"ev":"power_change","kw":6.9}
{"t":0,"ev":"arrival","job":0,"product":"T","ops":6,"due":420}
{"t":0,"ev":"release","job":0,"op":0}
{"t":0,"ev":"stage_release_ready","job":0,"op":0}
{"t":0,"ev":"route_assigned","job":0,"op":0,"cell":"C08"}
{"t":0,"ev":"process_start","job":0,"op":0,"cell":"C08","machine":1}
{"t":1,"ev":"breakdown","cell":"C08","machine":1,"job":0,"op":0}
{"t":1,"ev":"finish","job":0,"op":0,"cell":"C08","machine":1}
{"t":2,"ev":"episode_end","status":"done"}
`))
	f.Add([]byte(`{"t":-1,"ev":"transport_start","job":3,"op":0,"from":"dock","from_machine":9,"dur":-4,"cell":"C08"}` + "\n"))
	f.Add([]byte("{}\n\n[]\n"))
	f.Add([]byte(`{"t":1e308,"ev":"power_change","kw":1e308}` + "\n" + `{"t":0,"ev":"job_complete","job":99999999999,"cell":"C01","machine":-1}`))
	inst := plant(f, "A5C12-1").Inst
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Trace(bytes.NewReader(data), inst)
		if rep == nil {
			t.Fatal("nil report")
		}
		if err == nil && !bytes.Equal(data, valid) && rep.OK() {
			// Only a trace as good as the engine's may pass; with no
			// episode_start or episode_end it cannot.
			if !bytes.Contains(data, []byte("episode_start")) || !bytes.Contains(data, []byte("episode_end")) {
				t.Fatalf("incomplete trace passed:\n%s", data)
			}
		}
	})
}
