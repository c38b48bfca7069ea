/* collio's own C API (collio.h): collio_open, collio_write_at_all, ...,
 * taking MPI communicators, datatypes and info objects and returning MPI
 * error classes without applying error handlers; and the collio_file_stats
 * functions. */
#define _GNU_SOURCE
#include <stdint.h>

#include "shim_internal.h"
#include "collio.h"
#include "_cgo_export.h"

const char *collio_version(void) { return COLLIO_VERSION_STRING; }

int collio_is_collio_file(MPI_File fh) { return OURS(fh) && collioGoValid(H(fh)) == MPI_SUCCESS; }

MPI_File collio_file_to_mpi(collio_file fh) { return fh == NULL ? MPI_FILE_NULL : (MPI_File)(void *)fh; }

int collio_file_from_mpi(MPI_File fh, collio_file *out)
{
	if (out == NULL)
		return MPI_ERR_ARG;
	*out = COLLIO_FILE_NULL;
	if (!collio_is_collio_file(fh))
		return MPI_ERR_FILE;
	*out = (collio_file)(void *)fh;
	return MPI_SUCCESS;
}

int collio_last_error(char *buf, int len) { return collioGoLastError(buf, len); }

int collio_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, collio_file *fh)
{
	uintptr_t h = 0;
	int rc, inter = 0;
	if (fh == NULL || path == NULL)
		return MPI_ERR_ARG;
	*fh = COLLIO_FILE_NULL;
	if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return MPI_ERR_COMM;
	rc = collioGoOpen((void *)comm, (char *)path, amode, (void *)info, COLLIO_OPEN_CAPI, &h);
	if (rc == MPI_SUCCESS)
		*fh = (collio_file)h;
	return rc;
}

int collio_split_io_servers(MPI_Comm comm, int n, MPI_Info info, MPI_Comm *compute)
{
	void *out = NULL;
	int rc, inter = 0;
	if (compute == NULL)
		return MPI_ERR_ARG;
	*compute = MPI_COMM_NULL;
	if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return MPI_ERR_COMM;
	rc = collioGoSplitIOServers((void *)comm, n, (void *)info, &out);
	if (rc == MPI_SUCCESS && out != NULL)
		*compute = (MPI_Comm)out;
	return rc;
}

int collio_stop_io_servers(MPI_Comm compute)
{
	if (compute == MPI_COMM_NULL)
		return MPI_ERR_COMM;
	return collioGoStopIOServers((void *)compute);
}

int collio_close(collio_file *fh)
{
	void *eh = NULL;
	int rc;
	if (fh == NULL)
		return MPI_ERR_ARG;
	rc = collioGoClose(H(*fh), &eh);
	if (eh != NULL) {
		*fh = COLLIO_FILE_NULL;
		collio_errhandler_release((MPI_Errhandler)eh);
	}
	return rc;
}

int collio_delete(const char *path, MPI_Info info)
{
	if (path == NULL)
		return MPI_ERR_ARG;
	return collioGoDelete((char *)path, (void *)info);
}

int collio_set_view(collio_file fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, MPI_Info info)
{
	return collioGoSetView(H(fh), (long long)disp, (void *)etype, (void *)filetype, "native", (void *)info);
}

static int capi_xfer(collio_file fh, int op, MPI_Offset off, const void *buf, int count, MPI_Datatype dt,
		     MPI_Offset *nbytes)
{
	long long n = 0;
	int rc = collioGoXfer(H(fh), op, (long long)off, (void *)buf, count, (void *)dt, &n);
	if (nbytes != NULL)
		*nbytes = (MPI_Offset)n;
	return rc;
}

int collio_write_at(collio_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
		    MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XAT, off, buf, count, type, nbytes);
}

int collio_read_at(collio_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XAT | COLLIO_XREAD, off, buf, count, type, nbytes);
}

int collio_write_at_all(collio_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
			MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XAT_ALL, off, buf, count, type, nbytes);
}

int collio_read_at_all(collio_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype type,
		       MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XAT_ALL | COLLIO_XREAD, off, buf, count, type, nbytes);
}

int collio_write(collio_file fh, const void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XIND, 0, buf, count, type, nbytes);
}

int collio_read(collio_file fh, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XIND | COLLIO_XREAD, 0, buf, count, type, nbytes);
}

int collio_write_all(collio_file fh, const void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XALL, 0, buf, count, type, nbytes);
}

int collio_read_all(collio_file fh, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XALL | COLLIO_XREAD, 0, buf, count, type, nbytes);
}

int collio_seek(collio_file fh, MPI_Offset off, int whence)
{
	return collioGoSeek(H(fh), (long long)off, whence, 0);
}

int collio_get_position(collio_file fh, MPI_Offset *off)
{
	long long p = 0;
	int rc;
	if (off == NULL)
		return MPI_ERR_ARG;
	rc = collioGoPosition(H(fh), &p, 0);
	*off = (MPI_Offset)p;
	return rc;
}

int collio_get_size(collio_file fh, MPI_Offset *size)
{
	long long n = 0;
	int rc;
	if (size == NULL)
		return MPI_ERR_ARG;
	rc = collioGoSize(H(fh), &n);
	*size = (MPI_Offset)n;
	return rc;
}

int collio_set_size(collio_file fh, MPI_Offset size) { return collioGoSetSize(H(fh), (long long)size, 0); }

int collio_preallocate(collio_file fh, MPI_Offset size) { return collioGoSetSize(H(fh), (long long)size, 1); }

int collio_sync(collio_file fh) { return collioGoSync(H(fh)); }

int collio_set_atomicity(collio_file fh, int flag) { return collioGoAtomicity(H(fh), 1, &flag); }

int collio_file_get_info(collio_file fh, MPI_Info *info)
{
	void *i = NULL;
	int rc;
	if (info == NULL)
		return MPI_ERR_ARG;
	rc = collioGoGetInfo(H(fh), &i);
	if (rc == MPI_SUCCESS)
		*info = (MPI_Info)i;
	return rc;
}

int collio_file_set_info(collio_file fh, MPI_Info info) { return collioGoSetInfo(H(fh), (void *)info); }

int collio_file_stats(MPI_File fh, collio_stats *st)
{
	if (st == NULL)
		return MPI_ERR_ARG;
	if (!OURS(fh))
		return MPI_ERR_FILE;
	return collioGoFileStats(H(fh), 0, st);
}

int collio_file_stats_all(MPI_File fh, collio_stats *sum, collio_stats *min, collio_stats *max)
{
	collio_stats t[3];
	int rc;
	if (!OURS(fh))
		return MPI_ERR_FILE;
	rc = collioGoFileStats(H(fh), 1, t);
	if (rc != MPI_SUCCESS)
		return rc;
	if (sum != NULL)
		*sum = t[0];
	if (min != NULL)
		*min = t[1];
	if (max != NULL)
		*max = t[2];
	return MPI_SUCCESS;
}
