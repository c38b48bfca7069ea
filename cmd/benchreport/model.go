package main

// The JSON that collperf, iorbench and patterns write with -json (the
// fields benchreport reads). They share one schema; iorbench and patterns
// add "workload" and "case" (collperf's runs without them are workload
// "collperf"), and patterns may tag each result and implementation with
// its own workload when one launch ran several.

type collperfRun struct {
	Workload string            `json:"workload,omitempty"`
	Case     string            `json:"case,omitempty"`
	Label    string            `json:"label"`
	Time     string            `json:"time"`
	Host     string            `json:"host"`
	Command  []string          `json:"command"`
	NP       int               `json:"np"`
	Grid     [3]int            `json:"grid"`
	Size     [3]int            `json:"size"`
	Bytes    int64             `json:"bytes"`
	Dir      string            `json:"dir"`
	FS       string            `json:"fs"`
	Hints    map[string]string `json:"hints"`
	Iters    int               `json:"iters"`
	Impls    []implInfo        `json:"impls"`
	Results  []result          `json:"results"`
	Errors   []string          `json:"errors,omitempty"`
	File     string            `json:"file"` // set by benchreport: where it was read from
}

type implInfo struct {
	Impl       string            `json:"impl"`
	Kind       string            `json:"kind"`
	Workload   string            `json:"workload,omitempty"`
	MCA        map[string]string `json:"mca,omitempty"`
	PeakRSSMax int64             `json:"peak_rss_max_bytes"`
	PeakRSSMin int64             `json:"peak_rss_min_bytes"`
	RSSReset   bool              `json:"peak_rss_reset"`
}

type result struct {
	Impl     string             `json:"impl"`
	Kind     string             `json:"kind"`
	Workload string             `json:"workload,omitempty"`
	Case     string             `json:"case,omitempty"`
	Op       string             `json:"op"`
	Iter     int                `json:"iter"`
	Bytes    int64              `json:"bytes"`
	Seconds  map[string]float64 `json:"seconds"`
	Total    float64            `json:"total_seconds"`
	XferMiBs float64            `json:"xfer_mib_s"`
	TotalMiB float64            `json:"total_mib_s"`
	Bad      int64              `json:"bad_values"`
	Verify   string             `json:"verify,omitempty"` // "values", "by read", "read back", "none"; "" in older collperf JSON
	Alloc    allocStats         `json:"alloc"`
	Collio   *breakdown         `json:"collio,omitempty"`
}

type allocStats struct {
	Max           int64 `json:"max_bytes"`
	AggregatorMax int64 `json:"aggregator_max_bytes"`
	OtherMax      int64 `json:"non_aggregator_max_bytes"`
}

type breakdown struct {
	Strategy    string  `json:"strategy"`
	Reason      string  `json:"reason"`
	Rounds      int     `json:"rounds"`
	Aggregators int     `json:"aggregators"`
	Plan        float64 `json:"plan_s"`
	Exchange    float64 `json:"req_exchange_s"`
	Shuffle     float64 `json:"shuffle_s"`
	IO          float64 `json:"io_s"`
	RMW         float64 `json:"rmw_s"`
	IOWait      float64 `json:"io_wait_s"` // io+rmw not hidden behind the exchange (absent in older JSON)
	Total       float64 `json:"total_s"`
	MsgsSent    int64   `json:"msgs_sent"`
	MsgsRecv    int64   `json:"msgs_recv"`
	BytesSent   int64   `json:"bytes_sent"`
	BytesRecv   int64   `json:"bytes_recv"`
}

// launch is one line of the launch log that scripts/bench.sh writes
// (launches.tsv): sequence number, label, variant, directory, exit code,
// wall seconds, JSON file, command.
type launch struct {
	Seq     int     `json:"seq"`
	Label   string  `json:"label"`
	Variant string  `json:"variant"`
	Dir     string  `json:"dir"`
	RC      int     `json:"rc"`
	Seconds float64 `json:"seconds"`
	JSON    string  `json:"json"`
	Command string  `json:"command"`
}
