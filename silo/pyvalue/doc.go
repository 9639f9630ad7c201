// Package pyvalue is the Python value model SILO-BENCH's tasks are written
// in: the lists, tuples and ordered dicts the published Python generator
// builds, and the text forms that must match CPython byte for byte:
// json.dumps (task files, answers, fingerprints), str()/repr() (the shard
// text inside prompts), json.loads (answers and files) and Python literals
// as repr() prints them (what an agent copies out of a prompt).
//
// It exists apart from package task so that the value model and its
// formatting rules change for one reason only (CPython's behaviour), not
// whenever a task does.
//
// A value is one of:
//
//	nil       None / JSON null
//	bool
//	int64     int
//	*big.Int  int outside int64 (only ever from parsed answers)
//	float64
//	string
//	*List     list, or tuple when Tuple is set
//	*Dict     dict with ordered keys (string keys from JSON; int64 keys for
//	          Python dicts keyed by ids)
package pyvalue
