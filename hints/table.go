package hints

var (
	enableDisableAuto = []string{Enable, Disable, Automatic}
	enableDisable     = []string{Enable, Disable}
)

// Table declares every hint collio understands. To add a hint, add its key
// constant to keys.go and a Spec here; validation, resolution, the rank
// check, printing and the reference in docs/hints.md all follow from the entry.
// Table must not be modified at run time.
var Table = []Spec{
	// ROMIO generic hints.
	{Key: CBBufferSize, Kind: KindSize, Default: "16777216", Min: 1, MustAgree: true,
		Doc: "Size of the collective buffer of each aggregator, per round of two-phase I/O."},
	{Key: CBNodes, Kind: KindInt, Default: "", Min: 1, MustAgree: true, OpenOnly: true,
		Doc: "Number of aggregators. Default: the number of ranks, computed at open (values above it are reduced to it)."},
	{Key: CBConfigList, Kind: KindConfigList, Default: "*:1", MustAgree: true, OpenOnly: true,
		Doc: "Where aggregators run: host:n entries; the default is one aggregator per node."},
	{Key: RomioCBRead, Kind: KindEnum, Default: Automatic, Allowed: enableDisableAuto, MustAgree: true,
		Doc: "Collective buffering for collective reads: always, never, or when accesses interleave."},
	{Key: RomioCBWrite, Kind: KindEnum, Default: Automatic, Allowed: enableDisableAuto, MustAgree: true,
		Doc: "Collective buffering for collective writes: always, never, or when accesses interleave."},
	{Key: RomioNoIndepRW, Kind: KindBool, Default: False, MustAgree: true, OpenOnly: true,
		Doc: "Promise of no independent I/O: only aggregators open the file; forces collective buffering."},
	{Key: RomioDSRead, Kind: KindEnum, Default: Automatic, Allowed: enableDisableAuto,
		Doc: "Data sieving for independent noncontiguous reads: enable reads whole windows of ind_rd_buffer_size, holes included; automatic does so for pieces under 32 KiB and reads larger pieces alone, and reads the pieces on either side of a hole of 16 KiB or more apart (such a hole costs more than a system call)."},
	{Key: RomioDSWrite, Kind: KindEnum, Default: Automatic, Allowed: enableDisableAuto,
		Doc: "Data sieving for independent noncontiguous writes (read-modify-write of windows of ind_wr_buffer_size; automatic leaves pieces of 32 KiB and more alone). In collio, disable also stops aggregators from read-modify-writing holes in collective writes: each contiguous run is written instead. For a file shared across nodes on NFS or a FUSE file system (GlusterFS), whose client caches locks do not keep coherent, there is no read-modify-write whatever the value (docs/strategies.md)."},
	{Key: IndRdBufferSize, Kind: KindSize, Default: "4194304", Min: 1,
		Doc: "Buffer size of data sieving for independent reads."},
	{Key: IndWrBufferSize, Kind: KindSize, Default: "524288", Min: 1,
		Doc: "Buffer size of data sieving for independent writes; also the E10 cache sync chunk size."},
	{Key: StripingUnit, Kind: KindSize, Default: "0", Min: 0, MustAgree: true, OpenOnly: true,
		Doc: "Stripe size set when the file is created (lustre, beegfs and sim drivers; ufs has no striping); 0 = file-system default. Read back from the file system at open."},
	{Key: StripingFactor, Kind: KindInt, Default: "0", Min: 0, MustAgree: true, OpenOnly: true,
		Doc: "Stripe count set when the file is created (lustre, beegfs and sim drivers); 0 = file-system default. Read back from the file system at open."},
	{Key: StartIODevice, Kind: KindInt, Default: "-1", Min: -1, MustAgree: true, OpenOnly: true,
		Doc: "First storage target of the stripes when the file is created (lustre driver); -1 = file-system choice."},
	{Key: RomioMinFdomainSize, Kind: KindSize, Default: "0", Min: 0, MustAgree: true,
		Doc: "Smallest file domain per aggregator in two-phase I/O; 0 = no minimum."},

	// ROMIO Lustre driver hints.
	{Key: RomioLustreCoRatio, Kind: KindInt, Default: "1", Min: 1, MustAgree: true,
		Doc: "Striped file systems: with automatic aggregators, stripe count x this many aggregators, so at most this many write to each storage target."},
	{Key: RomioLustreCollThreshold, Kind: KindSize, Default: "0", Min: 0, MustAgree: true,
		Doc: "Striped file systems (Lustre, BeeGFS, sim), collective writes with romio_cb_write=automatic whose ranks' ranges do not interleave: > 0 applies ROMIO's Lustre rule, collective buffering (two-phase, stripe-aligned domains) when the call's requests (its contiguous file pieces over all ranks) average at most this many bytes, independent writes when they average more. 0 (default) keeps collio's rule, independent writes for every such call (ROMIO's Lustre driver would aggregate them all). No effect on reads, on interleaved calls, with romio_cb_write=enable or disable, or on files without striping (ufs)."},
	{Key: RomioLustreDSInColl, Kind: KindEnum, Default: Enable, Allowed: enableDisable, MustAgree: true,
		Doc: "Striped file systems (Lustre, BeeGFS, sim): two-phase aggregators read-modify-write the holes of a window and write it once (enable), or write each contiguous run (disable), as ROMIO's Lustre driver; romio_ds_write=disable does the latter on every file system."},
	{Key: DirectRead, Kind: KindBool, Default: False, OpenOnly: true,
		Doc: "Read with O_DIRECT (ufs and the drivers over it: lustre, beegfs, sim), through a second descriptor as in ROMIO: the aligned blocks of each read (alignment from statx STATX_DIOALIGN, else 4096) go straight into the user's buffer when it is aligned, else through an aligned bounce buffer, and a partial first or last block is read whole into one; past end of file as without it. Independent reads and the aggregators' reads of collective strategies alike. If the file system refuses O_DIRECT (tmpfs before Linux 6.6), the file is opened without it, the hint reads back false and rank 0 warns once."},
	{Key: DirectWrite, Kind: KindBool, Default: False, OpenOnly: true,
		Doc: "Write with O_DIRECT, as direct_read reads: the whole blocks (at least a page) of each write go through O_DIRECT, from an aligned bounce buffer where the user's buffer is not aligned; a partial first or last block goes through the page cache, as in ROMIO's Lustre driver, so no block is read-modify-written and ranks writing different bytes of one block keep each other's. The file's bytes are those of buffered writes. Independent writes and the aggregators' writes of collective strategies alike; the same fallback as direct_read."},

	// E10 node-local cache hints.
	{Key: E10Cache, Kind: KindEnum, Default: Disable, Allowed: []string{Enable, Disable, E10Coherent}, MustAgree: true, OpenOnly: true,
		Doc: "Node-local write cache (E10): writes land in a cache file per rank and background workers copy them to the global file; reads see data not copied yet. coherent also locks each written extent of the global file until it is copied. A collective read or write over a range some rank's cache still holds first copies that range (every rank waits), so collective calls see and order cached data whichever aggregators wrote it; an independent read consults only this rank's cache: data that a collective write routed through another rank's cache (this rank's own included) reaches it once copied, so call sync (or read collectively) before reading it back independently. coherent orders overlapping writes of different ranks through the locks (and copies at once, whatever e10_cache_flush_flag says). With the cache, writes do not read-modify-write holes unless romio_ds_write=enable and the cache is coherent (under enable, the ranks' cached windows would be copied over each other's bytes). If the cache cannot be opened on some rank, every rank writes the global file directly (warning on rank 0); a rank whose cache later cannot take a write (reservation or cache write failed) writes through at once, and every rank follows from its next collective call (rank 0 warns once; e10_cache then reads back as disable)."},
	{Key: E10CachePath, Kind: KindString, Default: "", MustAgree: true, OpenOnly: true,
		Doc: "Directory of the cache files and their journals on the node-local device (created 0700 if missing; may be shared if sticky, like /tmp, never writable by all without it); empty = the user's own `collio-e10-<uid>` in $TMPDIR or /tmp. After a crash, `collio recover DIR` copies what the journals list to the global files."},
	{Key: E10CacheFlushFlag, Kind: KindEnum, Default: E10FlushImmediate, Allowed: []string{E10FlushImmediate, E10FlushOnClose, E10FlushNone}, MustAgree: true, OpenOnly: true,
		Doc: "When cached data is copied to the global file: right after each write, at sync/close, or only at close (flush_none: sync makes the cache durable on the node instead). Sync and close wait for the copies and report every copy error."},
	{Key: E10CacheDiscardFlag, Kind: KindEnum, Default: Enable, Allowed: enableDisable, MustAgree: true, OpenOnly: true,
		Doc: "Delete the cache file and journal at close once everything was copied; disable keeps the cache file. After a failed copy both are always kept."},
	{Key: E10CacheThreads, Kind: KindInt, Default: "1", Min: 1, Max: 1024, MustAgree: true, OpenOnly: true,
		Doc: "Number of background copy workers per cache file (overlapping extents are still copied in write order)."},
	{Key: E10CacheDeferredClose, Kind: KindEnum, Default: Disable, Allowed: enableDisable, MustAgree: true, OpenOnly: true,
		Doc: "Close returns at once and the copy to the global file finishes in the background; the next open of the same file, and MPI finalisation, wait for it and report its errors."},

	// collio's own hints.
	{Key: CollioStrategy, Kind: KindEnum, Default: StrategyAuto,
		Allowed:   []string{StrategyAuto, StrategyTwoPhase, StrategyDynamic, StrategyStatic, StrategyTAM, StrategyIndependent},
		MustAgree: true,
		Doc:       "Collective I/O strategy; auto chooses from the access pattern (the romio_cb_read/write rules). twophase is ROMIO's extended two-phase (file domains), dynamic and static are OMPIO's segmentations (groups of ranks per aggregator), independent is each rank on its own; tam adds a first, intra-node aggregation layer (TAM)."},
	{Key: CollioNodeSize, Kind: KindInt, Default: "0", Min: 0, MustAgree: true, OpenOnly: true,
		Doc: "0 = real nodes; n > 0 groups consecutive ranks into virtual nodes of n ranks."},
	{Key: CollioCollectiveTimeout, Kind: KindInt, Default: "300", Min: 0, MustAgree: true,
		Doc: "Seconds a rank waits for the others to join a collective call on the file (a transfer, sync, set_view, set_size, close, ...) before failing with a timeout error, after which the file can only be closed, locally; 0 = wait forever. Ranks in different collective calls on the same file get ErrNotSame at once."},
	{Key: CollioErrorAgreement, Kind: KindEnum, Default: AgreeDeferred, Allowed: []string{AgreeDeferred, AgreeImmediate}, MustAgree: true,
		Doc: "When the ranks of a collective transfer agree on its outcome. immediate: at the end of every collective transfer, so each returns the same error on every rank (one more synchronizing collective per call). deferred (default): transfers in which every rank does its own I/O (strategy independent) skip that step; a rank whose part failed returns its error at once, and every rank returns it from the file's next synchronizing call: a collective transfer that synchronizes (which then does nothing), sync, set_view, set_info, set_size, preallocate, set_atomicity or close. Transfers that move data between ranks always agree at once. With deferred, transfers whose strategy the hints fix to independent (romio_cb_write or romio_cb_read = disable, or collio_strategy=independent) make no inter-rank communication at all, as in ROMIO; mismatched collective calls are then reported at the next synchronizing call."},
	{Key: CollioIOServers, Kind: KindString, Default: "0", OpenOnly: true,
		Doc: "Dedicated I/O server ranks, read by SplitIOServers (Go) and collio_split_io_servers (C) when they are given no count: a number of ranks (0 = none) or a percentage of the ranks such as 1% (rounded up); at least one rank must stay a compute rank. Environment: COLLIO_IO_SERVERS. Files opened on the compute communicator hand their writes to the servers (docs/ioserver.md)."},
	{Key: CollioIOServerBuffer, Kind: KindSize, Default: "67108864", Min: 4096, OpenOnly: true,
		Doc: "Bytes each I/O server holds at most (received, queued and being written); senders wait for room, a larger write goes in pieces. Read by SplitIOServers; environment: COLLIO_IO_SERVER_BUFFER."},
	{Key: CollioOverlap, Kind: KindEnum, Default: Enable, Allowed: enableDisable, MustAgree: true,
		Doc: "Overlap each round's file I/O with the next round's exchange on aggregators (two buffers instead of one); a call of one round has no next round and runs its I/O inline."},
	{Key: CollioFileDomains, Kind: KindEnum, Default: DomainsAuto, Allowed: []string{DomainsAuto, DomainsCyclic, DomainsAligned, DomainsEven, DomainsAffinity}, MustAgree: true,
		Doc: "How two-phase splits the file among aggregators: stripe_cyclic (aggregator i owns stripes i, i+n, ..., as ROMIO's Lustre driver), aligned (equal domains with edges on stripe boundaries, ROMIO's generic rule), even (equal domains, stripes ignored), affinity (the span is cut into blocks of 64 KiB or more, a multiple of striping_unit when set, and each block goes to the aggregator with most data in it (on several nodes, for a rank that does not aggregate, an aggregator on its node), up to 1.5 times an even share, other blocks as aligned; used when at least half of the call's bytes then stay at their writer and the rounds are no more than aligned domains would take (or when no byte crosses ranks), else aligned; costs one Allreduce of 8 bytes per block per call, none when the call's entry record shows every rank's data in 64 KiB blocks no other rank touches and every rank with data aggregates (own blocks: each rank writes its own data, nothing exchanged); calls whose span is under 2 blocks per aggregator use aligned); auto = stripe_cyclic when the file system reports striping, else affinity for writes on several nodes (the measured choice also times them on aligned domains and keeps the faster) and aligned for reads there (each node's client reads ahead of a scattered block into blocks other nodes read, so the servers send data twice) and on one node (where a crossing byte is one memory copy); own blocks still apply."},
	{Key: CollioAutoAggregators, Kind: KindEnum, Default: Enable, Allowed: enableDisable, MustAgree: true,
		Doc: "When neither cb_nodes nor cb_config_list is given, choose each call's aggregators: on a striped file system stripe count x romio_lustre_co_ratio of them, for segmentation and two-phase on one node every rank; on several nodes without striping one per node (ROMIO), or fewer by data volume with collio_bytes_per_aggregator; disable for ROMIO's one per node."},
	{Key: CollioMeasure, Kind: KindEnum, Default: Enable, Allowed: enableDisable, MustAgree: true,
		Doc: "With collio_strategy=auto, time the calls the table gave to collective buffering (or, with romio_cb_write/romio_cb_read=enable, to one of the aggregating strategies) and keep the fastest: per shape of call (direction, the table's choice, the call's size and mean piece to a power of two), two calls of each candidate (two-phase, dynamic on one node, TAM on several, independent I/O unless collective buffering is enabled; for writes on several nodes with automatic aggregators and under 256 KiB per aggregator also two-phase on half of them; for writes on several nodes where two-phase draws affinity domains, also two-phase on aligned domains), then the fastest, with another candidate tried again after 32, 64, ... up to 1024 calls, or at the next call where the kept one slowed 10% past another's older figure (a retrial's call alone is then that candidate's figure); every rank decides from the slowest rank's times, carried in the next call's entry record; what a file measured is kept at close for the next file opened on the same communicator, driver and file system with the same agreed hints. disable = the table alone."},
	{Key: CollioDeferredSync, Kind: KindEnum, Default: Enable, Allowed: enableDisable, MustAgree: true,
		Doc: "Where ranks on several nodes share a file on a file system whose node caches are not coherent (NFS, GlusterFS through FUSE), a collective write's aggregators write other ranks' bytes through their own node's client, and those bytes must reach the servers before the ranks that own them touch them again. enable (default): the write returns without a sync; each rank that wrote syncs later: at once when a collective call meets those bytes (a read of them, a write over them) or at sync, set_size, preallocate, seek_shared and close, otherwise after 200 ms without another collective write, whose sync then covers both. Before a rank touches those bytes (in a collective or an independent transfer), and before a nonblocking call, it waits until every rank's sync is done, learned from a value beside the shared file pointer's that rank 0 serves; if it had to wait for other ranks' delays (it read back alone), every rank syncs at the end of each later write of the file. A failed sync is the error of the access that waits for it and of close. disable: every rank syncs before the write returns (docs/strategies.md)."},
	{Key: CollioTAMLocal, Kind: KindInt, Default: "0", Min: 0, MustAgree: true,
		Doc: "TAM (collio_strategy=tam, or chosen): local aggregators per node, which gather their node's requests and data before the global aggregators (the ranks of a node are bound to them in blocks). 0 = TAM's default, ceil(512 / nodes) per node (ROMIO-TAM's ROMIO_LOCAL_AGGREGATOR_CO): with 512 ranks or fewer every rank is its own local aggregator and the first layer only adds a step."},
	{Key: CollioBytesPerAgg, Kind: KindSize, Default: "0", Min: 0, MustAgree: true,
		Doc: "With automatic aggregators on several nodes without striping: a call gets one aggregator per this many bytes it moves (at least one, at most one per node), as OMPIO's bytes_per_agg (32m there); small calls then have few aggregators, each writing larger pieces. 0 (default) = one per node whatever the volume, and the measured choice (collio_measure) also tries two-phase on half of them in writes under 256 KiB per aggregator; a value > 0 sets the count by volume instead, without that trial."},

	// Hints of the sim driver (sim: prefix). They are read when the file is
	// created and stored next to it; later opens use the stored values.
	{Key: CollioSimStripeSize, Kind: KindSize, Default: "1048576", Min: 1, OpenOnly: true,
		Doc: "sim driver: stripe size of a created file; striping_unit, when set, takes precedence."},
	{Key: CollioSimStripeCount, Kind: KindInt, Default: "4", Min: 1, Max: 2000, OpenOnly: true,
		Doc: "sim driver: number of emulated storage targets of a created file; striping_factor, when set, takes precedence."},
	{Key: CollioSimBandwidth, Kind: KindSize, Default: "209715200", Min: 0, OpenOnly: true,
		Doc: "sim driver: bandwidth of each emulated target in bytes per second; 0 = unlimited."},
	{Key: CollioSimLatency, Kind: KindInt, Default: "100", Min: 0, OpenOnly: true,
		Doc: "sim driver: cost of each request on each target it touches, in microseconds."},
	{Key: CollioSimLockLatency, Kind: KindInt, Default: "1000", Min: 0, OpenOnly: true,
		Doc: "sim driver: cost of revoking a stripe lock that another writer (or, for a write, another reader) holds, in microseconds."},

	// Hints of the faulty driver (faulty: prefix).
	{Key: CollioFault, Kind: KindString, Default: "", OpenOnly: true,
		Doc: "faulty driver: faults to inject, rules separated by ';': enospc_after=N (bytes, per file), enospc_process_after=N (bytes, per process), eio_call=OP:K (the K-th call of OP fails; K+ = from the K-th on), eio_offset=N (reads and writes touching byte N), short_write=K (or K+), slow=OP:DURATION (e.g. write:50ms), crash=OP:K (the K-th call of OP kills the process with SIGKILL: a crash, for tests under mpirun). OP is open, write, read, sync, allocate, truncate, size, lock, unlock, close or * (any call on the open file). Checked when the file is opened."},
	{Key: CollioFaultRanks, Kind: KindString, Default: "", OpenOnly: true,
		Doc: "faulty driver: comma-separated ranks that collio_fault applies to; empty = all ranks."},
}

// index maps a key to its position in Table.
var index = buildIndex(Table)

func buildIndex(t []Spec) map[string]int {
	m := make(map[string]int, len(t))
	for i, s := range t {
		m[s.Key] = i
	}
	return m
}

// Lookup returns the declaration of key.
func Lookup(key string) (Spec, bool) {
	i, ok := index[key]
	if !ok {
		return Spec{}, false
	}
	return Table[i], true
}
