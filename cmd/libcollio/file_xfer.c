/* The MPI_File_* transfer functions: reads and writes at explicit offsets,
 * at the individual and the shared file pointer, and in rank order;
 * blocking, nonblocking and split collective. On a collio file each runs
 * as xfer.c says; any other handle goes to the host's PMPI_File_*. */
#define _GNU_SOURCE

#include "shim_internal.h"

/* Explicit offsets. */

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
		     MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_at");
		return PMPI_File_read_at(fh, offset, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_read_at", COLLIO_XAT | COLLIO_XREAD, offset, buf, count, datatype, status);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
			 MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_at_all");
		return PMPI_File_read_at_all(fh, offset, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_read_at_all", COLLIO_XAT_ALL | COLLIO_XREAD, offset, buf, count, datatype,
			status);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
		      MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_at");
		return PMPI_File_write_at(fh, offset, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_write_at", COLLIO_XAT, offset, buf, count, datatype, status);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
			  MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_at_all");
		return PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_write_at_all", COLLIO_XAT_ALL, offset, buf, count, datatype, status);
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
		      MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread_at");
		return PMPI_File_iread_at(fh, offset, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iread_at", COLLIO_XAT | COLLIO_XREAD, offset, buf, count, datatype, request);
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
		       MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite_at");
		return PMPI_File_iwrite_at(fh, offset, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iwrite_at", COLLIO_XAT, offset, buf, count, datatype, request);
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
			  MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread_at_all");
		return PMPI_File_iread_at_all(fh, offset, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iread_at_all", COLLIO_XAT_ALL | COLLIO_XREAD, offset, buf, count, datatype,
			   request);
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
			   MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite_at_all");
		return PMPI_File_iwrite_at_all(fh, offset, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iwrite_at_all", COLLIO_XAT_ALL, offset, buf, count, datatype, request);
}

/* Individual file pointer. */

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read");
		return PMPI_File_read(fh, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_read", COLLIO_XIND | COLLIO_XREAD, 0, buf, count, datatype, status);
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_all");
		return PMPI_File_read_all(fh, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_read_all", COLLIO_XALL | COLLIO_XREAD, 0, buf, count, datatype, status);
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write");
		return PMPI_File_write(fh, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_write", COLLIO_XIND, 0, buf, count, datatype, status);
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_all");
		return PMPI_File_write_all(fh, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_write_all", COLLIO_XALL, 0, buf, count, datatype, status);
}

int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread");
		return PMPI_File_iread(fh, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iread", COLLIO_XIND | COLLIO_XREAD, 0, buf, count, datatype, request);
}

int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite");
		return PMPI_File_iwrite(fh, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iwrite", COLLIO_XIND, 0, buf, count, datatype, request);
}

int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread_all");
		return PMPI_File_iread_all(fh, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iread_all", COLLIO_XALL | COLLIO_XREAD, 0, buf, count, datatype, request);
}

int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite_all");
		return PMPI_File_iwrite_all(fh, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iwrite_all", COLLIO_XALL, 0, buf, count, datatype, request);
}

/* Shared file pointer. */

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_shared");
		return PMPI_File_read_shared(fh, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_read_shared", COLLIO_XSHARED | COLLIO_XREAD, 0, buf, count, datatype, status);
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_shared");
		return PMPI_File_write_shared(fh, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_write_shared", COLLIO_XSHARED, 0, buf, count, datatype, status);
}

int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread_shared");
		return PMPI_File_iread_shared(fh, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iread_shared", COLLIO_XSHARED | COLLIO_XREAD, 0, buf, count, datatype,
			   request);
}

int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite_shared");
		return PMPI_File_iwrite_shared(fh, buf, count, datatype, request);
	}
	return shim_nonblocking(fh, "MPI_File_iwrite_shared", COLLIO_XSHARED, 0, buf, count, datatype, request);
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_ordered");
		return PMPI_File_read_ordered(fh, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_read_ordered", COLLIO_XORDERED | COLLIO_XREAD, 0, buf, count, datatype, status);
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_ordered");
		return PMPI_File_write_ordered(fh, buf, count, datatype, status);
	}
	return shim_blocking(fh, "MPI_File_write_ordered", COLLIO_XORDERED, 0, buf, count, datatype, status);
}

/* Split collectives. */

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_at_all_begin");
		return PMPI_File_read_at_all_begin(fh, offset, buf, count, datatype);
	}
	return shim_split_begin(fh, "MPI_File_read_at_all_begin", COLLIO_XAT_ALL | COLLIO_XREAD, offset, buf, count,
			   datatype);
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_at_all_end");
		return PMPI_File_read_at_all_end(fh, buf, status);
	}
	return shim_split_end(fh, "MPI_File_read_at_all_end", COLLIO_XAT_ALL | COLLIO_XREAD, status);
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_at_all_begin");
		return PMPI_File_write_at_all_begin(fh, offset, buf, count, datatype);
	}
	return shim_split_begin(fh, "MPI_File_write_at_all_begin", COLLIO_XAT_ALL, offset, buf, count, datatype);
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_at_all_end");
		return PMPI_File_write_at_all_end(fh, buf, status);
	}
	return shim_split_end(fh, "MPI_File_write_at_all_end", COLLIO_XAT_ALL, status);
}

int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_all_begin");
		return PMPI_File_read_all_begin(fh, buf, count, datatype);
	}
	return shim_split_begin(fh, "MPI_File_read_all_begin", COLLIO_XALL | COLLIO_XREAD, 0, buf, count, datatype);
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_all_end");
		return PMPI_File_read_all_end(fh, buf, status);
	}
	return shim_split_end(fh, "MPI_File_read_all_end", COLLIO_XALL | COLLIO_XREAD, status);
}

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_all_begin");
		return PMPI_File_write_all_begin(fh, buf, count, datatype);
	}
	return shim_split_begin(fh, "MPI_File_write_all_begin", COLLIO_XALL, 0, buf, count, datatype);
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_all_end");
		return PMPI_File_write_all_end(fh, buf, status);
	}
	return shim_split_end(fh, "MPI_File_write_all_end", COLLIO_XALL, status);
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_ordered_begin");
		return PMPI_File_read_ordered_begin(fh, buf, count, datatype);
	}
	return shim_split_begin(fh, "MPI_File_read_ordered_begin", COLLIO_XORDERED | COLLIO_XREAD, 0, buf, count, datatype);
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_ordered_end");
		return PMPI_File_read_ordered_end(fh, buf, status);
	}
	return shim_split_end(fh, "MPI_File_read_ordered_end", COLLIO_XORDERED | COLLIO_XREAD, status);
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_ordered_begin");
		return PMPI_File_write_ordered_begin(fh, buf, count, datatype);
	}
	return shim_split_begin(fh, "MPI_File_write_ordered_begin", COLLIO_XORDERED, 0, buf, count, datatype);
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_ordered_end");
		return PMPI_File_write_ordered_end(fh, buf, status);
	}
	return shim_split_end(fh, "MPI_File_write_ordered_end", COLLIO_XORDERED, status);
}
