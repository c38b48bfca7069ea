/* The MPI_File_* functions that manage a file: open, close, delete, size,
 * group, access mode, info, view, file pointers, atomicity and sync. Open
 * and delete route by path (COLLIO_PASSTHROUGH, a config rule); the others
 * by handle: any handle not collio's goes to the host's PMPI_File_*. */
#define _GNU_SOURCE
#include <stdint.h>

#include "shim_internal.h"
#include "_cgo_export.h"

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
	uintptr_t h = 0;
	int rc, inter = 0;
	if (filename != NULL && collioGoRoute((char *)filename)) {
		void *merged = NULL;
		VIA_HOST("MPI_File_open");
		collioGoHostInfo((char *)filename, (void *)info, &merged);
		if (merged == NULL)
			return PMPI_File_open(comm, filename, amode, info, fh);
		MPI_Info mi = (MPI_Info)merged;
		rc = PMPI_File_open(comm, filename, amode, mi, fh);
		PMPI_Info_free(&mi);
		return rc;
	}
	VIA_COLLIO("MPI_File_open");
	if (fh == NULL)
		return shim_arg_error(MPI_FILE_NULL, MPI_ERR_ARG, "MPI_File_open", "fh is NULL");
	*fh = MPI_FILE_NULL;
	if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return shim_arg_error(MPI_FILE_NULL, MPI_ERR_COMM, "MPI_File_open",
				 "comm is MPI_COMM_NULL, not a communicator, or an intercommunicator");
	if (filename == NULL)
		return shim_arg_error(MPI_FILE_NULL, MPI_ERR_ARG, "MPI_File_open", "filename is NULL");
	rc = collioGoOpen((void *)comm, (char *)filename, amode, (void *)info, 0, &h);
	if (rc != MPI_SUCCESS)
		return shim_file_error(MPI_FILE_NULL, rc, "MPI_File_open");
	*fh = (MPI_File)h;
	return MPI_SUCCESS;
}

int MPI_File_close(MPI_File *fh)
{
	char msg[sizeof shim_noted.full];
	void *eh = NULL;
	MPI_File old;
	int rc;
	if (fh == NULL || !OURS(*fh)) {
		VIA_HOST("MPI_File_close");
		return PMPI_File_close(fh);
	}
	VIA_COLLIO("MPI_File_close");
	old = *fh;
	rc = collioGoClose(H(old), &eh);
	if (eh == NULL) /* not an open collio file */
		return shim_file_error(MPI_FILE_NULL, rc, "MPI_File_close");
	*fh = MPI_FILE_NULL;
	rc = shim_take_error(rc, msg, sizeof msg);
	rc = shim_invoke(old, (MPI_Errhandler)eh, rc, "MPI_File_close", msg);
	collio_errhandler_release((MPI_Errhandler)eh);
	return rc;
}

int MPI_File_delete(const char *filename, MPI_Info info)
{
	if (filename != NULL && collioGoRoute((char *)filename)) {
		VIA_HOST("MPI_File_delete");
		return PMPI_File_delete(filename, info);
	}
	VIA_COLLIO("MPI_File_delete");
	if (filename == NULL)
		return shim_arg_error(MPI_FILE_NULL, MPI_ERR_ARG, "MPI_File_delete", "filename is NULL");
	return shim_file_error(MPI_FILE_NULL, collioGoDelete((char *)filename, (void *)info), "MPI_File_delete");
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_set_size");
		return PMPI_File_set_size(fh, size);
	}
	VIA_COLLIO("MPI_File_set_size");
	return shim_file_error(fh, collioGoSetSize(H(fh), (long long)size, 0), "MPI_File_set_size");
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_preallocate");
		return PMPI_File_preallocate(fh, size);
	}
	VIA_COLLIO("MPI_File_preallocate");
	return shim_file_error(fh, collioGoSetSize(H(fh), (long long)size, 1), "MPI_File_preallocate");
}

int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	long long n = 0;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_size");
		return PMPI_File_get_size(fh, size);
	}
	VIA_COLLIO("MPI_File_get_size");
	if (size == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_size", "size is NULL");
	rc = collioGoSize(H(fh), &n);
	if (rc == MPI_SUCCESS)
		*size = (MPI_Offset)n;
	return shim_file_error(fh, rc, "MPI_File_get_size");
}

int MPI_File_get_group(MPI_File fh, MPI_Group *group)
{
	void *comm = NULL;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_group");
		return PMPI_File_get_group(fh, group);
	}
	VIA_COLLIO("MPI_File_get_group");
	if (group == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_group", "group is NULL");
	rc = collioGoComm(H(fh), &comm);
	if (rc == MPI_SUCCESS)
		rc = PMPI_Comm_group((MPI_Comm)comm, group);
	return shim_file_error(fh, rc, "MPI_File_get_group");
}

int MPI_File_get_amode(MPI_File fh, int *amode)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_amode");
		return PMPI_File_get_amode(fh, amode);
	}
	VIA_COLLIO("MPI_File_get_amode");
	if (amode == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_amode", "amode is NULL");
	return shim_file_error(fh, collioGoAmode(H(fh), amode), "MPI_File_get_amode");
}

int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_set_info");
		return PMPI_File_set_info(fh, info);
	}
	VIA_COLLIO("MPI_File_set_info");
	return shim_file_error(fh, collioGoSetInfo(H(fh), (void *)info), "MPI_File_set_info");
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
	void *info = NULL;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_info");
		return PMPI_File_get_info(fh, info_used);
	}
	VIA_COLLIO("MPI_File_get_info");
	if (info_used == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_info", "info_used is NULL");
	rc = collioGoGetInfo(H(fh), &info);
	if (rc == MPI_SUCCESS)
		*info_used = (MPI_Info)info;
	return shim_file_error(fh, rc, "MPI_File_get_info");
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
		      MPI_Info info)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_set_view");
		return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
	}
	VIA_COLLIO("MPI_File_set_view");
	return shim_file_error(fh,
			  collioGoSetView(H(fh), (long long)disp, (void *)etype, (void *)filetype, (char *)datarep,
					  (void *)info),
			  "MPI_File_set_view");
}

int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
	long long d = 0;
	void *et = NULL, *ft = NULL;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_view");
		return PMPI_File_get_view(fh, disp, etype, filetype, datarep);
	}
	VIA_COLLIO("MPI_File_get_view");
	if (disp == NULL || etype == NULL || filetype == NULL || datarep == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_view", "disp, etype, filetype or datarep is NULL");
	/* Derived types come back as new handles the caller frees (MPI-3.1 13.3). */
	rc = collioGoGetView(H(fh), &d, &et, &ft, datarep);
	if (rc == MPI_SUCCESS) {
		*etype = (MPI_Datatype)et;
		*filetype = (MPI_Datatype)ft;
		*disp = (MPI_Offset)d;
	}
	return shim_file_error(fh, rc, "MPI_File_get_view");
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_seek");
		return PMPI_File_seek(fh, offset, whence);
	}
	VIA_COLLIO("MPI_File_seek");
	return shim_file_error(fh, collioGoSeek(H(fh), (long long)offset, whence, 0), "MPI_File_seek");
}

int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
	long long p = 0;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_position");
		return PMPI_File_get_position(fh, offset);
	}
	VIA_COLLIO("MPI_File_get_position");
	if (offset == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_position", "offset is NULL");
	rc = collioGoPosition(H(fh), &p, 0);
	if (rc == MPI_SUCCESS)
		*offset = (MPI_Offset)p;
	return shim_file_error(fh, rc, "MPI_File_get_position");
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_seek_shared");
		return PMPI_File_seek_shared(fh, offset, whence);
	}
	VIA_COLLIO("MPI_File_seek_shared");
	return shim_file_error(fh, collioGoSeek(H(fh), (long long)offset, whence, 1), "MPI_File_seek_shared");
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
	long long p = 0;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_position_shared");
		return PMPI_File_get_position_shared(fh, offset);
	}
	VIA_COLLIO("MPI_File_get_position_shared");
	if (offset == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_position_shared", "offset is NULL");
	rc = collioGoPosition(H(fh), &p, 1);
	if (rc == MPI_SUCCESS)
		*offset = (MPI_Offset)p;
	return shim_file_error(fh, rc, "MPI_File_get_position_shared");
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
	long long d = 0;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_byte_offset");
		return PMPI_File_get_byte_offset(fh, offset, disp);
	}
	VIA_COLLIO("MPI_File_get_byte_offset");
	if (disp == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_byte_offset", "disp is NULL");
	rc = collioGoByteOffset(H(fh), (long long)offset, &d);
	if (rc == MPI_SUCCESS)
		*disp = (MPI_Offset)d;
	return shim_file_error(fh, rc, "MPI_File_get_byte_offset");
}

int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
	MPI_Aint lb;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_type_extent");
		return PMPI_File_get_type_extent(fh, datatype, extent);
	}
	VIA_COLLIO("MPI_File_get_type_extent");
	rc = collioGoValid(H(fh));
	if (rc == MPI_SUCCESS && extent == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_type_extent", "extent is NULL");
	if (rc == MPI_SUCCESS && datatype == MPI_DATATYPE_NULL)
		return shim_arg_error(fh, MPI_ERR_TYPE, "MPI_File_get_type_extent", "datatype is MPI_DATATYPE_NULL");
	/* Only the "native" representation is supported: the memory extent. */
	if (rc == MPI_SUCCESS)
		rc = PMPI_Type_get_extent(datatype, &lb, extent);
	return shim_file_error(fh, rc, "MPI_File_get_type_extent");
}

int MPI_File_set_atomicity(MPI_File fh, int flag)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_set_atomicity");
		return PMPI_File_set_atomicity(fh, flag);
	}
	VIA_COLLIO("MPI_File_set_atomicity");
	return shim_file_error(fh, collioGoAtomicity(H(fh), 1, &flag), "MPI_File_set_atomicity");
}

int MPI_File_get_atomicity(MPI_File fh, int *flag)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_atomicity");
		return PMPI_File_get_atomicity(fh, flag);
	}
	VIA_COLLIO("MPI_File_get_atomicity");
	if (flag == NULL)
		return shim_arg_error(fh, MPI_ERR_ARG, "MPI_File_get_atomicity", "flag is NULL");
	return shim_file_error(fh, collioGoAtomicity(H(fh), 0, flag), "MPI_File_get_atomicity");
}

int MPI_File_sync(MPI_File fh)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_sync");
		return PMPI_File_sync(fh);
	}
	VIA_COLLIO("MPI_File_sync");
	return shim_file_error(fh, collioGoSync(H(fh)), "MPI_File_sync");
}
