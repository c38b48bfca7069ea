/* Declarations shared by the C files of libcollio only (shim.h is the part
 * the Go side sees too). Everything here is hidden: the library exports
 * the MPI functions it replaces, collio.h's API and shim.h's helpers, not
 * its internals.
 *
 * The C files define the whole MPI_File_* family with the prototypes of
 * the host mpi.h (so the compiler checks them), collio.h's API, and the
 * MPI glue that is easier to write in C. One file per concern:
 *
 *   file_manage.c    MPI_File_open, close, delete, size, info, view, seek, ...
 *   file_xfer.c      MPI_File_read_at, write_all, iread_shared, ...: the transfers
 *                    (generated: go generate, from internal/xfergen's table)
 *   xfer.c           what a transfer function does on a collio file
 *   requests.c       generalized requests; MPI_Wait/Test*, MPI_Request_free
 *   errcodes.c       error codes registered with the host MPI, with collio's message
 *   errhandlers.c    file error handlers; MPI_File_*_errhandler
 *   handles.c        which handles are collio's; MPI_File_c2f, MPI_File_f2c
 *   init_finalize.c  MPI_Init, MPI_Init_thread, MPI_Finalize
 *   trace.c          COLLIO_VERBOSE's trace of each call
 *   capi.c           collio.h's collio_* functions
 *   gohelpers.c      MPI helpers the Go side calls
 *   lane.c           the fast lane (shim.h)
 *   fortran.c        the Fortran bindings
 */
#ifndef COLLIO_SHIM_INTERNAL_H
#define COLLIO_SHIM_INTERNAL_H

#include <stdint.h>
#include <mpi.h>

#include "shim.h"

#define SHIM_HIDDEN __attribute__((visibility("hidden")))

/* handles.c: a handle is ours when it lies in collio's reservation. */
#define OURS(fh) collio_is_ours((const void *)(fh))
#define H(fh) ((uintptr_t)(fh))

/* errcodes.c: the error a Go export reported on this thread (see there). */
struct noted_error {
	int set, cls;
	char msg[MPI_MAX_ERROR_STRING]; /* shortened to fit MPI_Add_error_string */
	char full[1024];                /* for COLLIO_VERBOSE and MPI_ERRORS_ARE_FATAL */
};
extern __thread struct noted_error shim_noted SHIM_HIDDEN;
SHIM_HIDDEN int shim_take_error(int cls, char *full, size_t size);

/* trace.c: COLLIO_VERBOSE's line per call. Every intercepted call on a
 * collio file starts with VIA_COLLIO, which also forgets an error noted on
 * this thread by an earlier call. */
SHIM_HIDDEN void shim_trace(const char *name, const char *where);
#define VIA_COLLIO(name) (shim_noted.set = 0, shim_trace(name, "collio"))
#define VIA_HOST(name) shim_trace(name, "host MPI-IO")

/* errhandlers.c: errors through the file's error handler. */
SHIM_HIDDEN int shim_invoke(MPI_File fh, MPI_Errhandler eh, int code, const char *name, const char *msg);
SHIM_HIDDEN int shim_file_error(MPI_File fh, int cls, const char *name);
SHIM_HIDDEN int shim_arg_error(MPI_File fh, int cls, const char *name, const char *what);

/* requests.c: generalized requests for nonblocking transfers. */
SHIM_HIDDEN int shim_done_request(long long n, MPI_Request *req);
SHIM_HIDDEN int shim_collective_start(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf,
				      int count, MPI_Datatype dt, MPI_Request *req);

/* xfer.c: what the transfer functions of file_xfer.c (MPI_File_read_at,
 * MPI_File_iwrite_all, ...) do on a collio file; op is a COLLIO_X* kind. */
SHIM_HIDDEN int shim_blocking(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
			      MPI_Datatype dt, MPI_Status *st);
SHIM_HIDDEN int shim_nonblocking(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
				 MPI_Datatype dt, MPI_Request *req);
SHIM_HIDDEN int shim_split_begin(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
				 MPI_Datatype dt);
SHIM_HIDDEN int shim_split_end(MPI_File fh, const char *name, int op, MPI_Status *st);

#endif
