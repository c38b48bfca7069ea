/* collio.h — the C API of libcollio, collective MPI-IO middleware.
 *
 * Linking a program with libcollio (before libmpi:
 *   cc app.c $(pkg-config --cflags --libs collio)
 * ) or preloading it (mpirun -x LD_PRELOAD=/path/libcollio.so ./app) makes
 * every MPI_File_* call of the program go through collio: no source change
 * is needed. This header adds collio's own C API, which takes the same MPI
 * handles (communicators, datatypes, info objects) and returns MPI error
 * classes (MPI_SUCCESS, MPI_ERR_IO, ...) without calling error handlers.
 *
 * A collio_file and the MPI_File that MPI_File_open returns for a collio
 * file are the same handle: collio_file_to_mpi/collio_file_from_mpi convert
 * between them, so both APIs can be mixed on one file.
 *
 * Offsets count etypes of the current view (bytes by default), as in MPI.
 * Functions named _all, open, close, set_view, set_size, preallocate, sync,
 * set_atomicity and set_info are collective over the file's communicator.
 */
#ifndef COLLIO_H
#define COLLIO_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLIO_VERSION_STRING "collio 0.1"

typedef struct collio_file_s *collio_file;
#define COLLIO_FILE_NULL ((collio_file)0)

/* The library version, e.g. "collio 0.1". Also a cheap way for a program
 * to check (with dlsym) that libcollio is loaded. */
const char *collio_version(void);

/* Open and close. amode takes the MPI_MODE_* values; info may be
 * MPI_INFO_NULL. Hints also come from ROMIO_HINTS and COLLIO_HINTS_CONFIG,
 * as for MPI_File_open, but collio_open never passes a file through to the
 * host MPI-IO. */
int collio_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, collio_file *fh);
int collio_close(collio_file *fh);
int collio_delete(const char *path, MPI_Info info);

/* The view (datarep is always "native"). */
int collio_set_view(collio_file fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, MPI_Info info);

/* Transfers: *nbytes (may be NULL) receives the bytes moved; a read moves
 * fewer than asked only at end of file. */
int collio_write_at(collio_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
		    MPI_Offset *nbytes);
int collio_read_at(collio_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes);
int collio_write_at_all(collio_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
			MPI_Offset *nbytes);
int collio_read_at_all(collio_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype type,
		       MPI_Offset *nbytes);
int collio_write(collio_file fh, const void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes);
int collio_read(collio_file fh, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes);
int collio_write_all(collio_file fh, const void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes);
int collio_read_all(collio_file fh, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes);

/* Individual file pointer (whence: MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END). */
int collio_seek(collio_file fh, MPI_Offset off, int whence);
int collio_get_position(collio_file fh, MPI_Offset *off);

/* Size and consistency. */
int collio_get_size(collio_file fh, MPI_Offset *size);
int collio_set_size(collio_file fh, MPI_Offset size);
int collio_preallocate(collio_file fh, MPI_Offset size);
int collio_sync(collio_file fh);
int collio_set_atomicity(collio_file fh, int flag);

/* Hints: get_info returns a new info object (free it with MPI_Info_free)
 * holding every effective hint. */
int collio_file_get_info(collio_file fh, MPI_Info *info);
int collio_file_set_info(collio_file fh, MPI_Info info);

/* Per-file metrics: what the COLLIO_STATS report at MPI_File_close shows,
 * while the file is open, whether COLLIO_STATS is set or not. Times are in
 * nanoseconds. */
typedef struct {
	long long calls;            /* calls that succeeded */
	long long failed;           /* calls that returned an error (not counted elsewhere) */
	long long bytes;            /* data bytes moved */
	long long pieces;           /* contiguous file pieces the calls touched */
	long long rounds;           /* two-phase cycles (collective) */
	long long aggregator_calls; /* collective calls in which this rank did file I/O for others */
	long long plan_ns, req_exchange_ns, shuffle_ns, io_ns, rmw_ns, io_wait_ns, cache_drain_ns, agree_ns;
	long long total_ns; /* time in the calls */
	long long msgs_sent, msgs_recv, bytes_sent, bytes_recv;
} collio_call_stats;

typedef struct {
	int ranks;         /* ranks the figures cover: 1 for collio_file_stats */
	long long open_ns; /* time since open */
	collio_call_stats collective_write, collective_read, independent_write, independent_read;
	/* The last successful collective call's strategy ("twophase", ...) and
	 * why it was chosen; empty before the first. Cut to fit, NUL-terminated. */
	char strategy[32];
	char reason[256];
} collio_stats;

/* This rank's figures for open collio file fh (an MPI_File from
 * MPI_File_open, or collio_file_to_mpi of a collio_file). Independent
 * calls count the shared-pointer ones. Not collective. MPI_ERR_FILE when
 * fh is not an open collio file, MPI_ERR_ARG when st is NULL. */
int collio_file_stats(MPI_File fh, collio_stats *st);

/* The figures over the file's ranks, as the COLLIO_STATS report has them:
 * each counter's sum, smallest and largest per-rank value (any of the
 * three may be NULL). Collective over the file's communicator (one
 * MPI_Allgather of about 600 bytes per rank). */
int collio_file_stats_all(MPI_File fh, collio_stats *sum, collio_stats *min, collio_stats *max);

/* Dedicated I/O server ranks (collective on comm). n > 0 ranks become I/O
 * servers, spread over the nodes; n = 0 takes collio_io_servers from info,
 * else from the environment (COLLIO_IO_SERVERS): a count or a percentage
 * such as "1%". collio_io_server_buffer bounds each server's memory. On
 * compute ranks *compute is the communicator of the compute ranks: files
 * opened on it (collio_open or MPI_File_open under collio) hand their
 * writes to the servers, and sync and close return every server write
 * error on every rank. On server ranks the call serves until the compute
 * ranks call collio_stop_io_servers (or MPI_Finalize), then returns
 * MPI_SUCCESS with *compute = MPI_COMM_NULL. A count of 0 (n = 0 and
 * collio_io_servers 0) is MPI_ERR_ARG; a bad collio_io_servers or
 * collio_io_server_buffer value is MPI_ERR_INFO_VALUE-class, with a message
 * (collio_last_error) naming the hint and the value. */
int collio_split_io_servers(MPI_Comm comm, int n, MPI_Info info, MPI_Comm *compute);

/* Ends the I/O servers (collective on the compute communicator) once they
 * have written everything; returns the same error on every compute rank.
 * The compute communicator stays the caller's to free. */
int collio_stop_io_servers(MPI_Comm compute);

/* The message of the last error on this process (any thread), truncated
 * to len-1 bytes; returns its full length. */
int collio_last_error(char *buf, int len);

/* Handle conversions. collio_is_collio_file is 1 for an open file served
 * by collio, 0 for MPI_FILE_NULL or a file passed through to the host
 * MPI-IO. */
int collio_is_collio_file(MPI_File fh);
MPI_File collio_file_to_mpi(collio_file fh);
int collio_file_from_mpi(MPI_File fh, collio_file *out);

#ifdef __cplusplus
}
#endif

#endif
