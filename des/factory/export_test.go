package factory

// SetNoise sets the processing-noise multiplier of job j's operation op
// (before the engine starts it): tests compare plants whose hidden noise
// differs.
func SetNoise(e *Engine, j, op int, v float64) { e.jobs[j].Noise[op] = v }
