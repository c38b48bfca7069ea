// Package cache is collio's E10 node-local write cache (Congiu et al.,
// "Improving Collective I/O Performance Using Non-Volatile Memory
// Devices"): a driver.File decorator over the global file whose writes
// land in a cache file on a node-local device, while background workers
// copy them to the global file, so the slow parallel file system is
// written behind the application's next compute phase.
//
// The driver stack (package driver/stack) puts it over each writing
// rank's driver file when the e10_cache hint is enable or coherent
// (OptionsFromHints gives the options), and adio agrees on whether every
// rank keeps it. In short:
//
//   - each write reserves its space in the cache file (Allocate), lands
//     there, is recorded in a journal beside it, and is queued for copying
//     at once (flush_immediate), at Sync/Close (flush_onclose) or at Close
//     (flush_none);
//   - e10_cache_threads workers copy queued extents in ind_wr_buffer_size
//     chunks; extents that overlap are copied one after another in write
//     order; idle workers sleep on a condition variable;
//   - reads take the ranges not copied yet from the cache;
//   - Sync and Close wait for the copies and return every copy error
//     (CopyError); failed extents stay in the cache and are retried;
//   - coherent holds a lock on each written range of the global file until
//     it is copied (lock counting lets adio's own locks coexist);
//   - a rank whose cache runs out of space writes through from then on;
//   - with DeferredClose, Close returns at once; WaitPath (the next open)
//     and WaitAll (MPI finalisation) wait and report;
//   - after a crash, Recover (collio recover DIR) copies what the journals
//     list; the journal format and its durability rule are in journal.go.
//
// Stats, StatsOf and Totals report the time Sync and Close waited for
// copies: the paper's not_hidden_sync.
package cache
