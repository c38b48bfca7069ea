package adio

import (
	"time"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
)

// config holds the hints that transfers read, resolved once from the hint
// set whenever it changes (setHints: open, set_view, set_info, a fallback),
// so that a call reads fields instead of looking keys up and parsing
// values, several dozen times per call.
type config struct {
	strategy       string // collio_strategy
	deferAgreement bool   // collio_error_agreement=deferred
	noIndepRW      bool   // romio_no_indep_rw: only aggregators opened the file
	// cb is romio_cb_read and romio_cb_write, ds romio_ds_read and
	// romio_ds_write (enable, disable, automatic), indexed by direction.
	cb, ds            [2]string
	indBufSize        [2]int64 // ind_rd_buffer_size, ind_wr_buffer_size
	direct            [2]bool  // direct_read, direct_write
	collectiveTimeout time.Duration
	overlap           bool
	measure           bool // collio_measure: time the table's collective choices (measure.go)
	deferredSync      bool // collio_deferred_sync: sync collective writes in the background (publish.go)
	// autoAggregators: collio_auto_aggregators=enable and the user named
	// no aggregators (cb_nodes, cb_config_list) and every rank opened.
	autoAggregators  bool
	coRatio          int64 // romio_lustre_co_ratio
	bytesPerAgg      int64 // collio_bytes_per_agg
	cbBufferSize     int64
	lustreDSInColl   string
	lustreCollThresh int64
	fileDomains      string // collio_file_domains
	// ioServers: transfers go to I/O servers (not a hint: the file's
	// communicator says so).
	ioServers bool
	// strategies are made from these hints on first use (File.strategy),
	// and the one whose own-blocks reports calls carry is looked for once
	// (File.ownBlocksReporter).
	strategies    map[string]coll.Strategy
	reporter      coll.OwnBlocksReporter
	reporterFound bool
}

func newConfig(h *hints.Set) config {
	return config{
		strategy:          h.Enum(hints.CollioStrategy),
		deferAgreement:    h.Enum(hints.CollioErrorAgreement) == hints.AgreeDeferred,
		noIndepRW:         h.Bool(hints.RomioNoIndepRW),
		cb:                [2]string{h.Enum(hints.RomioCBRead), h.Enum(hints.RomioCBWrite)},
		ds:                [2]string{h.Enum(hints.RomioDSRead), h.Enum(hints.RomioDSWrite)},
		indBufSize:        [2]int64{h.Int(hints.IndRdBufferSize), h.Int(hints.IndWrBufferSize)},
		direct:            [2]bool{h.Bool(hints.DirectRead), h.Bool(hints.DirectWrite)},
		collectiveTimeout: time.Duration(h.Int(hints.CollioCollectiveTimeout)) * time.Second,
		overlap:           h.Enum(hints.CollioOverlap) == hints.Enable,
		measure:           h.Enum(hints.CollioMeasure) == hints.Enable,
		deferredSync:      h.Enum(hints.CollioDeferredSync) == hints.Enable,
		autoAggregators: h.Enum(hints.CollioAutoAggregators) == hints.Enable &&
			!h.IsSet(hints.CBNodes) && !h.IsSet(hints.CBConfigList) && !h.Bool(hints.RomioNoIndepRW),
		coRatio:          h.Int(hints.RomioLustreCoRatio),
		bytesPerAgg:      h.Int(hints.CollioBytesPerAgg),
		cbBufferSize:     h.Int(hints.CBBufferSize),
		lustreDSInColl:   h.Enum(hints.RomioLustreDSInColl),
		lustreCollThresh: h.Int(hints.RomioLustreCollThreshold),
		fileDomains:      h.Enum(hints.CollioFileDomains),
	}
}

// setHints makes h the file's hints and resolves its config.
func (f *File) setHints(h *hints.Set) {
	f.hints = h
	f.cfg = newConfig(h)
	f.cfg.ioServers = f.viaServers
}
