/* How a transfer function (file_xfer.c) runs on a collio file: blocking
 * calls through the fast lane (lane.c) or Go, nonblocking ones with a
 * generalized request (requests.c), split collectives in two halves. */
#define _GNU_SOURCE
#include <stdint.h>

#include "shim_internal.h"
#include "_cgo_export.h"

static void set_status(MPI_Status *st, long long n)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	PMPI_Status_set_elements_x(st, MPI_BYTE, (MPI_Count)n);
	PMPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
}

int shim_blocking(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
		  MPI_Datatype dt, MPI_Status *st)
{
	long long n = 0;
	int rc;
	VIA_COLLIO(name);
	int lane = -1;
	if ((op & COLLIO_XKIND) == COLLIO_XAT_ALL)
		lane = (op & COLLIO_XREAD) ? COLLIO_LANE_READ_ALL : COLLIO_LANE_WRITE_ALL;
	else if (op == (COLLIO_XAT | COLLIO_XREAD))
		lane = COLLIO_LANE_READ;
	if (lane >= 0 && collio_lane_serve(H(fh), lane, (long long)off, (void *)buf, count, dt, &n)) {
		set_status(st, n);
		return MPI_SUCCESS;
	}
	rc = collioGoXfer(H(fh), op, (long long)off, (void *)buf, count, (void *)dt, &n);
	set_status(st, n);
	return shim_file_error(fh, rc, name);
}

int shim_nonblocking(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
		     MPI_Datatype dt, MPI_Request *req)
{
	long long n = 0;
	int rc;
	VIA_COLLIO(name);
	if (req == NULL)
		return shim_arg_error(fh, MPI_ERR_REQUEST, name, "request is NULL");
	int kind = op & COLLIO_XKIND;
	if (kind == COLLIO_XAT_ALL || kind == COLLIO_XALL)
		return shim_collective_start(fh, name, op, off, buf, count, dt, req);
	rc = collioGoXfer(H(fh), op, (long long)off, (void *)buf, count, (void *)dt, &n);
	if (rc == MPI_SUCCESS)
		rc = shim_done_request(n, req);
	if (rc != MPI_SUCCESS)
		*req = MPI_REQUEST_NULL;
	return shim_file_error(fh, rc, name);
}

int shim_split_begin(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
		     MPI_Datatype dt)
{
	long long n = 0;
	VIA_COLLIO(name);
	return shim_file_error(
		fh, collioGoXfer(H(fh), op | COLLIO_XSPLIT, (long long)off, (void *)buf, count, (void *)dt, &n), name);
}

int shim_split_end(MPI_File fh, const char *name, int op, MPI_Status *st)
{
	long long n = 0;
	int rc;
	VIA_COLLIO(name);
	rc = collioGoSplitEnd(H(fh), op, &n);
	set_status(st, n);
	return shim_file_error(fh, rc, name);
}
