/* Internal declarations shared by the C files and the Go side of
 * libcollio (cgo preambles include it; what only the C files share is in
 * shim_internal.h). Not installed: the public header is collio.h. */
#ifndef COLLIO_SHIM_H
#define COLLIO_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

/* Transfer kinds for collioGoXfer: one of the positioning/coordination
 * kinds, plus COLLIO_XREAD for reads and COLLIO_XSPLIT for the _begin half
 * of a split collective. */
enum {
	COLLIO_XAT = 0,      /* explicit offset, independent */
	COLLIO_XAT_ALL = 1,  /* explicit offset, collective */
	COLLIO_XIND = 2,     /* individual file pointer, independent */
	COLLIO_XALL = 3,     /* individual file pointer, collective */
	COLLIO_XSHARED = 4,  /* shared file pointer, independent */
	COLLIO_XORDERED = 5, /* shared file pointer, collective in rank order */
	COLLIO_XKIND = 7,    /* mask of the kinds above */
	COLLIO_XREAD = 8,
	COLLIO_XSPLIT = 16
};

/* Flags for collioGoOpen. */
enum {
	COLLIO_OPEN_CAPI = 1 /* opened through collio_open: never passed through */
};

/* Handles: addresses inside a PROT_NONE reservation (handles.c, handles.go). */
void *collio_handle_base(void);
size_t collio_handle_span(void);
int collio_is_ours(const void *h);

/* collioGoOpen calls it first: MPI_Finalize need not ask Go about
 * deferred closes if collio never opened a file. */
void collio_note_open(void);

/* Verbosity from COLLIO_VERBOSE (0 if unset). */
int collio_verbose(void);
int collio_world_rank(void);

/* fail (main.go) notes an error's class and message for the calling
 * thread: full is the whole message, msg its form shortened to fit
 * MPI_Add_error_string (both with lengths, not NUL-terminated). */
void collio_note_error(int cls, const char *full, int nfull, const char *msg, int nmsg);

/* Error handlers (errhandlers.c). */
MPI_Errhandler collio_default_errhandler(void);
int collio_errhandler_retain(MPI_Errhandler eh);
void collio_errhandler_release(MPI_Errhandler eh);
/* A file error handler made from Fortran: collio calls fn with Fortran
 * arguments (fortran.c). */
void collio_remember_fortran_errhandler(MPI_Errhandler eh, void *fn);

/* Datatype helpers for the view's etype and filetype. */
int collio_type_keep(MPI_Datatype t, MPI_Datatype *out);
void collio_type_drop(MPI_Datatype t);
int collio_type_is_named(MPI_Datatype t);
MPI_Datatype collio_type_byte(void);

/* Nonblocking collective transfers: collioGoIStart calls it (from any
 * thread) when the transfer behind generalized request g has completed. */
void collio_greq_ready(void *g);

/* Info helpers for get_info. */
MPI_Info collio_info_new(void);
void collio_info_put(MPI_Info info, const char *key, const char *value);
MPI_Info collio_info_null(void);
int collio_info_fint(MPI_Info info);

/* MPI_Comm_group of the file's communicator. */
int collio_comm_group(MPI_Comm comm, MPI_Group *group);

/* The fast lane (lane.c): transfers with explicit offsets that collio
 * would serve with one pread or pwrite and no communication are served in
 * C, without entering Go. Go arms a kind after a transfer it made
 * (adio.File.Lane and ReadLane say what the next calls would do) and
 * takes the lane back, with what it served, at the start of every Go call
 * on the file. Kinds: */
enum {
	COLLIO_LANE_READ_ALL = 0,  /* MPI_File_read_at_all */
	COLLIO_LANE_WRITE_ALL = 1, /* MPI_File_write_at_all */
	COLLIO_LANE_READ = 2,      /* MPI_File_read_at */
	COLLIO_LANES = 3
};
/* bytes: as requested (how collective calls are counted); moved: as read
 * (independent calls). */
struct collio_lane_calls {
	long long calls, bytes, moved, ns, last_bytes, last_ns, pieces;
};
void collio_lane_arm(uintptr_t h, int kind, int fd, long long base, long long etsize, long long calls,
		     MPI_Datatype dt, long long dtsize);
/* Disarms every kind and moves their counts into out[COLLIO_LANES]. */
void collio_lane_take(uintptr_t h, struct collio_lane_calls *out);
/* Serves one transfer if the lane is armed for it: 1 and the bytes moved
 * in *n, or 0 to go through Go (which then also reports any error). */
int collio_lane_serve(uintptr_t h, int kind, long long off, void *buf, int count, MPI_Datatype dt, long long *n);
int collio_lane_enabled(void);

/* The value of a switch variable (COLLIO_VERBOSE, COLLIO_FAST_LANE, ...),
 * parsed in Go (internal/envvar); its default when the value is not
 * accepted, which MPI_File_open then reports. */
int collioGoEnvInt(char *name);

#endif
