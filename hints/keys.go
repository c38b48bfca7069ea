package hints

// ROMIO generic hints.
const (
	CBBufferSize        = "cb_buffer_size"
	CBNodes             = "cb_nodes"
	CBConfigList        = "cb_config_list"
	RomioCBRead         = "romio_cb_read"
	RomioCBWrite        = "romio_cb_write"
	RomioNoIndepRW      = "romio_no_indep_rw"
	RomioDSRead         = "romio_ds_read"
	RomioDSWrite        = "romio_ds_write"
	IndRdBufferSize     = "ind_rd_buffer_size"
	IndWrBufferSize     = "ind_wr_buffer_size"
	StripingUnit        = "striping_unit"
	StripingFactor      = "striping_factor"
	StartIODevice       = "start_iodevice"
	RomioMinFdomainSize = "romio_min_fdomain_size"
)

// ROMIO Lustre driver hints.
const (
	RomioLustreCoRatio       = "romio_lustre_co_ratio"
	RomioLustreCollThreshold = "romio_lustre_coll_threshold"
	RomioLustreDSInColl      = "romio_lustre_ds_in_coll"
	DirectRead               = "direct_read"
	DirectWrite              = "direct_write"
)

// E10 node-local cache hints.
const (
	E10Cache            = "e10_cache"
	E10CachePath        = "e10_cache_path"
	E10CacheFlushFlag   = "e10_cache_flush_flag"
	E10CacheDiscardFlag = "e10_cache_discard_flag"
	E10CacheThreads     = "e10_cache_threads"
	// E10CacheDeferredClose: close returns at once and the copy to the
	// global file finishes in the background (E10's mpiwrap deferred close).
	E10CacheDeferredClose = "e10_cache_deferred_close"
)

// collio's own hints.
const (
	CollioStrategy          = "collio_strategy"
	CollioNodeSize          = "collio_node_size"
	CollioCollectiveTimeout = "collio_collective_timeout"
	CollioOverlap           = "collio_overlap"
	CollioFileDomains       = "collio_file_domains"
	CollioAutoAggregators   = "collio_auto_aggregators"
	CollioMeasure           = "collio_measure"
	CollioDeferredSync      = "collio_deferred_sync"
	CollioTAMLocal          = "collio_tam_local_aggregators"
	CollioBytesPerAgg       = "collio_bytes_per_aggregator"
	CollioErrorAgreement    = "collio_error_agreement"
	// CollioIOServers is how many ranks SplitIOServers makes I/O servers:
	// a count or a percentage of the ranks.
	CollioIOServers = "collio_io_servers"
	// CollioIOServerBuffer bounds the bytes each I/O server holds.
	CollioIOServerBuffer = "collio_io_server_buffer"
)

// Values of collio_error_agreement.
const (
	// AgreeImmediate: every collective transfer ends with an agreement, so
	// it returns the same error on every rank.
	AgreeImmediate = "immediate"
	// AgreeDeferred: collective transfers in which every rank does its
	// own I/O skip that agreement; an error reaches every rank at the
	// file's next synchronizing call.
	AgreeDeferred = "deferred"
)

// Values of collio_file_domains.
const (
	DomainsAuto    = "auto"
	DomainsCyclic  = "stripe_cyclic"
	DomainsAligned = "aligned"
	DomainsEven    = "even"
	// DomainsAffinity gives each block to the rank with most data in it.
	DomainsAffinity = "affinity"
)

// Hints of the sim driver (an emulated striped parallel file system).
const (
	CollioSimStripeSize  = "collio_sim_stripe_size"
	CollioSimStripeCount = "collio_sim_stripe_count"
	CollioSimBandwidth   = "collio_sim_bandwidth"
	CollioSimLatency     = "collio_sim_latency"
	CollioSimLockLatency = "collio_sim_lock_latency"
)

// Hints of the faulty driver (fault injection).
const (
	CollioFault      = "collio_fault"
	CollioFaultRanks = "collio_fault_ranks"
)

// Driver parameters that are not hints: adio adds them to
// driver.OpenOptions.Params on each rank.
const (
	// CollioRank is the rank (in the file's communicator) of the process
	// opening the driver file, in decimal.
	CollioRank = "collio_rank"
)

// Values shared by several enum hints.
const (
	Enable    = "enable"
	Disable   = "disable"
	Automatic = "automatic"
	True      = "true"
	False     = "false"
)

// Values of e10_cache and e10_cache_flush_flag.
const (
	E10Coherent       = "coherent"
	E10FlushImmediate = "flush_immediate"
	E10FlushOnClose   = "flush_onclose"
	E10FlushNone      = "flush_none"
)

// Values of collio_strategy.
const (
	StrategyAuto        = "auto"
	StrategyTwoPhase    = "twophase"
	StrategyDynamic     = "dynamic"
	StrategyStatic      = "static"
	StrategyTAM         = "tam"
	StrategyIndependent = "independent"
)

// Environment variables.
const (
	// EnvHintsFile names the system hints file (ROMIO's variable and format).
	EnvHintsFile = "ROMIO_HINTS"
	// EnvPrintHints, when "1", asks the file layer to print the effective
	// hints at open with (*Set).Fprint.
	EnvPrintHints = "COLLIO_PRINT_HINTS"
	// EnvIOServers and EnvIOServerBuffer set collio_io_servers and
	// collio_io_server_buffer for SplitIOServers when the caller's hints
	// do not.
	EnvIOServers      = "COLLIO_IO_SERVERS"
	EnvIOServerBuffer = "COLLIO_IO_SERVER_BUFFER"
)

// Sources of an effective value, as reported by (*Set).Source.
const (
	SourceDefault = "default"
	SourceFile    = "ROMIO_HINTS"
	SourceUser    = "user"
	SourceDerived = "derived"
)
