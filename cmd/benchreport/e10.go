package main

// The E10 cache report (benchreport -e10 base.json cached.json ...): the
// collperf -phases runs of scripts/e10bench.sh side by side, measured
// perceived bandwidth next to what the E10 paper's model predicts from the
// same run's Tc and Ts.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// e10File is the part of a collperf -json report that -phases fills.
type e10File struct {
	Label string `json:"label"`
	Busy  bool   `json:"compute_busy"`
	Bytes int64  `json:"bytes"`
	Runs  []struct {
		Impl    string  `json:"impl"`
		Compute float64 `json:"compute_s"`
		Phases  []struct {
			Write float64 `json:"write_s"`
			Sync  float64 `json:"sync_s"`
			Wait  float64 `json:"wait_s"`
		} `json:"phases"`
		Perceived float64 `json:"perceived_mib_s"`
		Model     float64 `json:"model_mib_s"`
		Hidden    float64 `json:"hidden_mib_s"`
	} `json:"phase_runs"`
}

func loadE10(path string) (e10File, error) {
	var f e10File
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err == nil && len(f.Runs) == 0 {
		err = fmt.Errorf("no phase_runs (not a collperf -phases report)")
	}
	if err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	if f.Label == "" {
		f.Label = path
	}
	return f, nil
}

// renderE10 writes the markdown table: one row per file and compute time,
// with the speed-up over the first file (the run without the cache) at
// the same compute time.
func renderE10(w io.Writer, paths []string) error {
	var files []e10File
	for _, p := range paths {
		f, err := loadE10(p)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	base := map[float64]float64{}
	for _, r := range files[0].Runs {
		base[r.Compute] = r.Perceived
	}
	fmt.Fprintf(w, "| run | compute C (s) | mean Tc (s) | mean Ts (s) | mean wait (s) | perceived MiB/s | model MiB/s | perceived ÷ model | all hidden MiB/s | ÷ %s |\n", files[0].Label)
	fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, f := range files {
		for _, r := range f.Runs {
			var tc, ts, wait float64
			for _, p := range r.Phases {
				tc += p.Write
				ts += p.Sync
				wait += p.Wait
			}
			n := float64(max(1, len(r.Phases)))
			ratio, speedup := "—", "—"
			if r.Model > 0 {
				ratio = fmt.Sprintf("%.2f", r.Perceived/r.Model)
			}
			if b := base[r.Compute]; b > 0 {
				speedup = fmt.Sprintf("%.2f", r.Perceived/b)
			}
			fmt.Fprintf(w, "| %s | %.2f | %.3f | %.3f | %.3f | %.1f | %.1f | %s | %.1f | %s |\n",
				f.Label, r.Compute, tc/n, ts/n, wait/n, r.Perceived, r.Model, ratio, r.Hidden, speedup)
		}
	}
	return nil
}
