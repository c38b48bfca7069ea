/* The Fortran bindings of libcollio.
 *
 * Open MPI's Fortran bindings (libmpi_mpifh: mpif.h and `use mpi`; the
 * mpi_f08 wrappers of libmpi_usempif08 call the same ompi_*_f functions)
 * call PMPI_File_* directly, so the C MPI_File_* of libcollio never see a
 * Fortran program's calls. This file defines every Fortran symbol the host
 * exports for the MPI_File_* family and MPI_Finalize (ompi_x_f, mpi_x,
 * mpi_x_, mpi_x__, MPI_X, MPI_X_f, MPI_X_f08 and their pmpi variants, all
 * aliases of one function), converts the Fortran arguments and calls the C
 * MPI_File_* functions (file_manage.c, file_xfer.c, ...), which serve
 * collio's files and pass the others to the host MPI-IO.
 *
 * The pmpi_ names are replaced too: a Fortran handle of a collio file means
 * nothing to the host's PMPI layer, so a profiling layer's pmpi_ call on it
 * must reach collio as well.
 *
 * Arguments follow Open MPI's conventions: handles are MPI_Fint (converted
 * with the f2c/c2f functions), logicals are MPI_Fint with .TRUE. = 1 (the
 * gfortran value Open MPI was built with), strings carry their length as a
 * hidden int argument at the end and are blank-padded, MPI_STATUS_IGNORE is
 * MPI_F_STATUS_IGNORE, and MPI_BOTTOM is the address of Open MPI's Fortran
 * common block mpi_fortran_bottom.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* Fortran LOGICAL values (Open MPI 4.1 with gfortran: 4 bytes, .TRUE. = 1). */
#define FORTRAN_TRUE 1
#define FORTRAN_FALSE 0

/* The addresses of Open MPI's Fortran MPI_BOTTOM, in each name mangling;
 * weak: a build may define only some of them. */
extern int mpi_fortran_bottom __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_bottom__ __attribute__((weak));
extern int MPI_FORTRAN_BOTTOM __attribute__((weak));

static void *f_buf(char *buf)
{
	if (buf != NULL && (buf == (char *)&mpi_fortran_bottom || buf == (char *)&mpi_fortran_bottom_ ||
			    buf == (char *)&mpi_fortran_bottom__ || buf == (char *)&MPI_FORTRAN_BOTTOM))
		return MPI_BOTTOM;
	return buf;
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
	if (ierr != NULL)
		*ierr = (MPI_Fint)rc;
}

/* f_string returns a C copy of Fortran string s of length len without its
 * leading and trailing blanks (as Open MPI's bindings read names), or NULL
 * when out of memory. */
static char *f_string(const char *s, int len)
{
	char *c;
	if (len < 0)
		len = 0;
	while (len > 0 && *s == ' ') {
		s++;
		len--;
	}
	while (len > 0 && s[len - 1] == ' ')
		len--;
	c = malloc((size_t)len + 1);
	if (c == NULL)
		return NULL;
	memcpy(c, s, (size_t)len);
	c[len] = '\0';
	return c;
}

/* c_to_f_string copies C string c into Fortran string f of length len,
 * padded with blanks. */
static void c_to_f_string(const char *c, char *f, int len)
{
	size_t n = strlen(c);
	if (len <= 0)
		return;
	if (n > (size_t)len)
		n = (size_t)len;
	memcpy(f, c, n);
	memset(f + n, ' ', (size_t)len - n);
}

/* Statuses: f_status gives the C status to pass for Fortran status fs,
 * status_out copies it back after a successful call. */
static MPI_Status *f_status(MPI_Fint *fs, MPI_Status *c)
{
	if (fs == NULL || fs == MPI_F_STATUS_IGNORE)
		return MPI_STATUS_IGNORE;
	return c;
}

static void status_out(int rc, MPI_Fint *fs, MPI_Status *c)
{
	if (rc == MPI_SUCCESS && fs != NULL && fs != MPI_F_STATUS_IGNORE)
		PMPI_Status_c2f(c, fs);
}

#define FILE_OF(f) MPI_File_f2c(*(f))
#define TYPE_OF(t) PMPI_Type_f2c(*(t))
#define INFO_OF(i) PMPI_Info_f2c(*(i))

/* ALIASES declares every name under which the host's Fortran library
 * exports function ompi_<l>_f (l: file_open, ...; U: FILE_OPEN; M:
 * File_open) as an alias of collio's implementation collio_<l>_f. */
#define ALIAS_OF(impl) __attribute__((alias(#impl), visibility("default")))
#define ALIASES(l, U, M, params)                                 \
	void ompi_##l##_f params ALIAS_OF(collio_##l##_f);       \
	void mpi_##l params ALIAS_OF(collio_##l##_f);            \
	void mpi_##l##_ params ALIAS_OF(collio_##l##_f);         \
	void mpi_##l##__ params ALIAS_OF(collio_##l##_f);        \
	void MPI_##U params ALIAS_OF(collio_##l##_f);            \
	void MPI_##M##_f params ALIAS_OF(collio_##l##_f);        \
	void MPI_##M##_f08 params ALIAS_OF(collio_##l##_f);      \
	void pompi_##l##_f params ALIAS_OF(collio_##l##_f);      \
	void pmpi_##l params ALIAS_OF(collio_##l##_f);           \
	void pmpi_##l##_ params ALIAS_OF(collio_##l##_f);        \
	void pmpi_##l##__ params ALIAS_OF(collio_##l##_f);       \
	void PMPI_##U params ALIAS_OF(collio_##l##_f);           \
	void PMPI_##M##_f params ALIAS_OF(collio_##l##_f);       \
	void PMPI_##M##_f08 params ALIAS_OF(collio_##l##_f)

/* -------------------------------------------------------- open and close */

#define P_OPEN (MPI_Fint * comm, char *filename, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh, MPI_Fint *ierr, int len)
void collio_file_open_f P_OPEN;
void collio_file_open_f P_OPEN
{
	MPI_File c = MPI_FILE_NULL;
	char *name = f_string(filename, len);
	int rc = MPI_ERR_NO_MEM;
	if (name != NULL)
		rc = MPI_File_open(PMPI_Comm_f2c(*comm), name, (int)*amode, INFO_OF(info), &c);
	free(name);
	*fh = MPI_File_c2f(c); /* MPI_FILE_NULL after a failure, as in C */
	set_ierr(ierr, rc);
}
ALIASES(file_open, FILE_OPEN, File_open, P_OPEN);

#define P_CLOSE (MPI_Fint * fh, MPI_Fint *ierr)
void collio_file_close_f P_CLOSE;
void collio_file_close_f P_CLOSE
{
	MPI_File c = FILE_OF(fh);
	int rc = MPI_File_close(&c);
	if (rc == MPI_SUCCESS)
		*fh = MPI_File_c2f(c);
	set_ierr(ierr, rc);
}
ALIASES(file_close, FILE_CLOSE, File_close, P_CLOSE);

#define P_DELETE (char *filename, MPI_Fint *info, MPI_Fint *ierr, int len)
void collio_file_delete_f P_DELETE;
void collio_file_delete_f P_DELETE
{
	char *name = f_string(filename, len);
	int rc = MPI_ERR_NO_MEM;
	if (name != NULL)
		rc = MPI_File_delete(name, INFO_OF(info));
	free(name);
	set_ierr(ierr, rc);
}
ALIASES(file_delete, FILE_DELETE, File_delete, P_DELETE);

/* ------------------------------------------------------------- transfers */

/* Blocking transfers with an explicit offset. */
#define P_AT (MPI_Fint * fh, MPI_Offset *offset, char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)
#define XFER_AT(l, U, M, cfn)                                                                                 \
	void collio_##l##_f P_AT;                                                                             \
	void collio_##l##_f P_AT                                                                              \
	{                                                                                                     \
		MPI_Status st;                                                                                \
		int rc = cfn(FILE_OF(fh), *offset, f_buf(buf), (int)*count, TYPE_OF(type), f_status(status, &st)); \
		status_out(rc, status, &st);                                                                  \
		set_ierr(ierr, rc);                                                                           \
	}                                                                                                     \
	ALIASES(l, U, M, P_AT)

XFER_AT(file_read_at, FILE_READ_AT, File_read_at, MPI_File_read_at);
XFER_AT(file_read_at_all, FILE_READ_AT_ALL, File_read_at_all, MPI_File_read_at_all);
XFER_AT(file_write_at, FILE_WRITE_AT, File_write_at, MPI_File_write_at);
XFER_AT(file_write_at_all, FILE_WRITE_AT_ALL, File_write_at_all, MPI_File_write_at_all);

/* Nonblocking transfers with an explicit offset. */
#define P_IAT (MPI_Fint * fh, MPI_Offset *offset, char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *request, MPI_Fint *ierr)
#define XFER_IAT(l, U, M, cfn)                                                                     \
	void collio_##l##_f P_IAT;                                                                 \
	void collio_##l##_f P_IAT                                                                  \
	{                                                                                          \
		MPI_Request r = MPI_REQUEST_NULL;                                                  \
		int rc = cfn(FILE_OF(fh), *offset, f_buf(buf), (int)*count, TYPE_OF(type), &r); \
		if (rc == MPI_SUCCESS)                                                             \
			*request = PMPI_Request_c2f(r);                                            \
		set_ierr(ierr, rc);                                                                \
	}                                                                                          \
	ALIASES(l, U, M, P_IAT)

XFER_IAT(file_iread_at, FILE_IREAD_AT, File_iread_at, MPI_File_iread_at);
XFER_IAT(file_iread_at_all, FILE_IREAD_AT_ALL, File_iread_at_all, MPI_File_iread_at_all);
XFER_IAT(file_iwrite_at, FILE_IWRITE_AT, File_iwrite_at, MPI_File_iwrite_at);
XFER_IAT(file_iwrite_at_all, FILE_IWRITE_AT_ALL, File_iwrite_at_all, MPI_File_iwrite_at_all);

/* Blocking transfers at a file pointer (individual or shared). */
#define P_PTR (MPI_Fint * fh, char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)
#define XFER_PTR(l, U, M, cfn)                                                                       \
	void collio_##l##_f P_PTR;                                                                   \
	void collio_##l##_f P_PTR                                                                    \
	{                                                                                            \
		MPI_Status st;                                                                       \
		int rc = cfn(FILE_OF(fh), f_buf(buf), (int)*count, TYPE_OF(type), f_status(status, &st)); \
		status_out(rc, status, &st);                                                         \
		set_ierr(ierr, rc);                                                                  \
	}                                                                                            \
	ALIASES(l, U, M, P_PTR)

XFER_PTR(file_read, FILE_READ, File_read, MPI_File_read);
XFER_PTR(file_read_all, FILE_READ_ALL, File_read_all, MPI_File_read_all);
XFER_PTR(file_write, FILE_WRITE, File_write, MPI_File_write);
XFER_PTR(file_write_all, FILE_WRITE_ALL, File_write_all, MPI_File_write_all);
XFER_PTR(file_read_shared, FILE_READ_SHARED, File_read_shared, MPI_File_read_shared);
XFER_PTR(file_write_shared, FILE_WRITE_SHARED, File_write_shared, MPI_File_write_shared);
XFER_PTR(file_read_ordered, FILE_READ_ORDERED, File_read_ordered, MPI_File_read_ordered);
XFER_PTR(file_write_ordered, FILE_WRITE_ORDERED, File_write_ordered, MPI_File_write_ordered);

/* Nonblocking transfers at a file pointer. */
#define P_IPTR (MPI_Fint * fh, char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *request, MPI_Fint *ierr)
#define XFER_IPTR(l, U, M, cfn)                                                           \
	void collio_##l##_f P_IPTR;                                                       \
	void collio_##l##_f P_IPTR                                                        \
	{                                                                                 \
		MPI_Request r = MPI_REQUEST_NULL;                                         \
		int rc = cfn(FILE_OF(fh), f_buf(buf), (int)*count, TYPE_OF(type), &r); \
		if (rc == MPI_SUCCESS)                                                    \
			*request = PMPI_Request_c2f(r);                                   \
		set_ierr(ierr, rc);                                                       \
	}                                                                                 \
	ALIASES(l, U, M, P_IPTR)

XFER_IPTR(file_iread, FILE_IREAD, File_iread, MPI_File_iread);
XFER_IPTR(file_iread_all, FILE_IREAD_ALL, File_iread_all, MPI_File_iread_all);
XFER_IPTR(file_iwrite, FILE_IWRITE, File_iwrite, MPI_File_iwrite);
XFER_IPTR(file_iwrite_all, FILE_IWRITE_ALL, File_iwrite_all, MPI_File_iwrite_all);
XFER_IPTR(file_iread_shared, FILE_IREAD_SHARED, File_iread_shared, MPI_File_iread_shared);
XFER_IPTR(file_iwrite_shared, FILE_IWRITE_SHARED, File_iwrite_shared, MPI_File_iwrite_shared);

/* Split collectives: _begin with an explicit offset, _begin at a file
 * pointer, and _end. */
#define P_BEGIN_AT (MPI_Fint * fh, MPI_Offset *offset, char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *ierr)
#define BEGIN_AT(l, U, M, cfn)                                                                   \
	void collio_##l##_f P_BEGIN_AT;                                                          \
	void collio_##l##_f P_BEGIN_AT                                                           \
	{                                                                                        \
		set_ierr(ierr, cfn(FILE_OF(fh), *offset, f_buf(buf), (int)*count, TYPE_OF(type))); \
	}                                                                                        \
	ALIASES(l, U, M, P_BEGIN_AT)

BEGIN_AT(file_read_at_all_begin, FILE_READ_AT_ALL_BEGIN, File_read_at_all_begin, MPI_File_read_at_all_begin);
BEGIN_AT(file_write_at_all_begin, FILE_WRITE_AT_ALL_BEGIN, File_write_at_all_begin, MPI_File_write_at_all_begin);

#define P_BEGIN (MPI_Fint * fh, char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *ierr)
#define BEGIN_PTR(l, U, M, cfn)                                                         \
	void collio_##l##_f P_BEGIN;                                                    \
	void collio_##l##_f P_BEGIN                                                     \
	{                                                                               \
		set_ierr(ierr, cfn(FILE_OF(fh), f_buf(buf), (int)*count, TYPE_OF(type))); \
	}                                                                               \
	ALIASES(l, U, M, P_BEGIN)

BEGIN_PTR(file_read_all_begin, FILE_READ_ALL_BEGIN, File_read_all_begin, MPI_File_read_all_begin);
BEGIN_PTR(file_write_all_begin, FILE_WRITE_ALL_BEGIN, File_write_all_begin, MPI_File_write_all_begin);
BEGIN_PTR(file_read_ordered_begin, FILE_READ_ORDERED_BEGIN, File_read_ordered_begin, MPI_File_read_ordered_begin);
BEGIN_PTR(file_write_ordered_begin, FILE_WRITE_ORDERED_BEGIN, File_write_ordered_begin, MPI_File_write_ordered_begin);

#define P_END (MPI_Fint * fh, char *buf, MPI_Fint *status, MPI_Fint *ierr)
#define END(l, U, M, cfn)                                                        \
	void collio_##l##_f P_END;                                               \
	void collio_##l##_f P_END                                                \
	{                                                                        \
		MPI_Status st;                                                   \
		int rc = cfn(FILE_OF(fh), f_buf(buf), f_status(status, &st)); \
		status_out(rc, status, &st);                                     \
		set_ierr(ierr, rc);                                              \
	}                                                                        \
	ALIASES(l, U, M, P_END)

END(file_read_at_all_end, FILE_READ_AT_ALL_END, File_read_at_all_end, MPI_File_read_at_all_end);
END(file_write_at_all_end, FILE_WRITE_AT_ALL_END, File_write_at_all_end, MPI_File_write_at_all_end);
END(file_read_all_end, FILE_READ_ALL_END, File_read_all_end, MPI_File_read_all_end);
END(file_write_all_end, FILE_WRITE_ALL_END, File_write_all_end, MPI_File_write_all_end);
END(file_read_ordered_end, FILE_READ_ORDERED_END, File_read_ordered_end, MPI_File_read_ordered_end);
END(file_write_ordered_end, FILE_WRITE_ORDERED_END, File_write_ordered_end, MPI_File_write_ordered_end);

/* ------------------------------------------------------------------ view */

#define P_SET_VIEW                                                                                          \
	(MPI_Fint * fh, MPI_Offset *disp, MPI_Fint *etype, MPI_Fint *filetype, char *datarep, MPI_Fint *info, \
	 MPI_Fint *ierr, int len)
void collio_file_set_view_f P_SET_VIEW;
void collio_file_set_view_f P_SET_VIEW
{
	char *rep = f_string(datarep, len);
	int rc = MPI_ERR_NO_MEM;
	if (rep != NULL)
		rc = MPI_File_set_view(FILE_OF(fh), *disp, TYPE_OF(etype), TYPE_OF(filetype), rep, INFO_OF(info));
	free(rep);
	set_ierr(ierr, rc);
}
ALIASES(file_set_view, FILE_SET_VIEW, File_set_view, P_SET_VIEW);

#define P_GET_VIEW \
	(MPI_Fint * fh, MPI_Offset *disp, MPI_Fint *etype, MPI_Fint *filetype, char *datarep, MPI_Fint *ierr, int len)
void collio_file_get_view_f P_GET_VIEW;
void collio_file_get_view_f P_GET_VIEW
{
	MPI_Datatype e, f;
	MPI_Offset d;
	char rep[MPI_MAX_DATAREP_STRING + 1] = "";
	int rc = MPI_File_get_view(FILE_OF(fh), &d, &e, &f, rep);
	if (rc == MPI_SUCCESS) {
		*disp = d;
		*etype = PMPI_Type_c2f(e);
		*filetype = PMPI_Type_c2f(f);
		c_to_f_string(rep, datarep, len);
	}
	set_ierr(ierr, rc);
}
ALIASES(file_get_view, FILE_GET_VIEW, File_get_view, P_GET_VIEW);

/* --------------------------------------------- offsets, sizes, pointers */

/* Calls taking the file and one MPI_Offset argument (in or out). */
#define P_OFF (MPI_Fint * fh, MPI_Offset *offset, MPI_Fint *ierr)
#define OFF_IN(l, U, M, cfn)                                     \
	void collio_##l##_f P_OFF;                               \
	void collio_##l##_f P_OFF                                \
	{                                                        \
		set_ierr(ierr, cfn(FILE_OF(fh), *offset));       \
	}                                                        \
	ALIASES(l, U, M, P_OFF)
#define OFF_OUT(l, U, M, cfn)                                    \
	void collio_##l##_f P_OFF;                               \
	void collio_##l##_f P_OFF                                \
	{                                                        \
		MPI_Offset v = 0;                                \
		int rc = cfn(FILE_OF(fh), &v);                   \
		if (rc == MPI_SUCCESS)                           \
			*offset = v;                             \
		set_ierr(ierr, rc);                              \
	}                                                        \
	ALIASES(l, U, M, P_OFF)

OFF_IN(file_set_size, FILE_SET_SIZE, File_set_size, MPI_File_set_size);
OFF_IN(file_preallocate, FILE_PREALLOCATE, File_preallocate, MPI_File_preallocate);
OFF_OUT(file_get_size, FILE_GET_SIZE, File_get_size, MPI_File_get_size);
OFF_OUT(file_get_position, FILE_GET_POSITION, File_get_position, MPI_File_get_position);
OFF_OUT(file_get_position_shared, FILE_GET_POSITION_SHARED, File_get_position_shared, MPI_File_get_position_shared);

#define P_SEEK (MPI_Fint * fh, MPI_Offset *offset, MPI_Fint *whence, MPI_Fint *ierr)
#define SEEK(l, U, M, cfn)                                                  \
	void collio_##l##_f P_SEEK;                                         \
	void collio_##l##_f P_SEEK                                          \
	{                                                                   \
		set_ierr(ierr, cfn(FILE_OF(fh), *offset, (int)*whence));    \
	}                                                                   \
	ALIASES(l, U, M, P_SEEK)

SEEK(file_seek, FILE_SEEK, File_seek, MPI_File_seek);
SEEK(file_seek_shared, FILE_SEEK_SHARED, File_seek_shared, MPI_File_seek_shared);

#define P_BYTE_OFFSET (MPI_Fint * fh, MPI_Offset *offset, MPI_Offset *disp, MPI_Fint *ierr)
void collio_file_get_byte_offset_f P_BYTE_OFFSET;
void collio_file_get_byte_offset_f P_BYTE_OFFSET
{
	MPI_Offset d = 0;
	int rc = MPI_File_get_byte_offset(FILE_OF(fh), *offset, &d);
	if (rc == MPI_SUCCESS)
		*disp = d;
	set_ierr(ierr, rc);
}
ALIASES(file_get_byte_offset, FILE_GET_BYTE_OFFSET, File_get_byte_offset, P_BYTE_OFFSET);

#define P_TYPE_EXTENT (MPI_Fint * fh, MPI_Fint *type, MPI_Aint *extent, MPI_Fint *ierr)
void collio_file_get_type_extent_f P_TYPE_EXTENT;
void collio_file_get_type_extent_f P_TYPE_EXTENT
{
	MPI_Aint x = 0;
	int rc = MPI_File_get_type_extent(FILE_OF(fh), TYPE_OF(type), &x);
	if (rc == MPI_SUCCESS)
		*extent = x;
	set_ierr(ierr, rc);
}
ALIASES(file_get_type_extent, FILE_GET_TYPE_EXTENT, File_get_type_extent, P_TYPE_EXTENT);

/* ------------------------------------------- file properties and hints */

#define P_FINT (MPI_Fint * fh, MPI_Fint *v, MPI_Fint *ierr)

void collio_file_get_group_f P_FINT;
void collio_file_get_group_f P_FINT
{
	MPI_Group g;
	int rc = MPI_File_get_group(FILE_OF(fh), &g);
	if (rc == MPI_SUCCESS)
		*v = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}
ALIASES(file_get_group, FILE_GET_GROUP, File_get_group, P_FINT);

void collio_file_get_amode_f P_FINT;
void collio_file_get_amode_f P_FINT
{
	int a = 0;
	int rc = MPI_File_get_amode(FILE_OF(fh), &a);
	if (rc == MPI_SUCCESS)
		*v = (MPI_Fint)a;
	set_ierr(ierr, rc);
}
ALIASES(file_get_amode, FILE_GET_AMODE, File_get_amode, P_FINT);

void collio_file_set_info_f P_FINT;
void collio_file_set_info_f P_FINT { set_ierr(ierr, MPI_File_set_info(FILE_OF(fh), INFO_OF(v))); }
ALIASES(file_set_info, FILE_SET_INFO, File_set_info, P_FINT);

void collio_file_get_info_f P_FINT;
void collio_file_get_info_f P_FINT
{
	MPI_Info i;
	int rc = MPI_File_get_info(FILE_OF(fh), &i);
	if (rc == MPI_SUCCESS)
		*v = PMPI_Info_c2f(i);
	set_ierr(ierr, rc);
}
ALIASES(file_get_info, FILE_GET_INFO, File_get_info, P_FINT);

void collio_file_set_atomicity_f P_FINT;
void collio_file_set_atomicity_f P_FINT
{
	set_ierr(ierr, MPI_File_set_atomicity(FILE_OF(fh), *v != FORTRAN_FALSE));
}
ALIASES(file_set_atomicity, FILE_SET_ATOMICITY, File_set_atomicity, P_FINT);

void collio_file_get_atomicity_f P_FINT;
void collio_file_get_atomicity_f P_FINT
{
	int flag = 0;
	int rc = MPI_File_get_atomicity(FILE_OF(fh), &flag);
	if (rc == MPI_SUCCESS)
		*v = flag ? FORTRAN_TRUE : FORTRAN_FALSE;
	set_ierr(ierr, rc);
}
ALIASES(file_get_atomicity, FILE_GET_ATOMICITY, File_get_atomicity, P_FINT);

#define P_SYNC (MPI_Fint * fh, MPI_Fint *ierr)
void collio_file_sync_f P_SYNC;
void collio_file_sync_f P_SYNC { set_ierr(ierr, MPI_File_sync(FILE_OF(fh))); }
ALIASES(file_sync, FILE_SYNC, File_sync, P_SYNC);

/* -------------------------------------------------------- error handlers */

void collio_file_set_errhandler_f P_FINT;
void collio_file_set_errhandler_f P_FINT
{
	set_ierr(ierr, MPI_File_set_errhandler(FILE_OF(fh), PMPI_Errhandler_f2c(*v)));
}
ALIASES(file_set_errhandler, FILE_SET_ERRHANDLER, File_set_errhandler, P_FINT);

void collio_file_get_errhandler_f P_FINT;
void collio_file_get_errhandler_f P_FINT
{
	MPI_Errhandler eh;
	int rc = MPI_File_get_errhandler(FILE_OF(fh), &eh);
	if (rc == MPI_SUCCESS)
		*v = PMPI_Errhandler_c2f(eh);
	set_ierr(ierr, rc);
}
ALIASES(file_get_errhandler, FILE_GET_ERRHANDLER, File_get_errhandler, P_FINT);

void collio_file_call_errhandler_f P_FINT;
void collio_file_call_errhandler_f P_FINT { set_ierr(ierr, MPI_File_call_errhandler(FILE_OF(fh), (int)*v)); }
ALIASES(file_call_errhandler, FILE_CALL_ERRHANDLER, File_call_errhandler, P_FINT);

/* A Fortran error handler is made by the host's own Fortran binding (which
 * marks it as Fortran, so the host calls it right for its files), found with
 * dlsym(RTLD_NEXT) because this file replaces the name; collio remembers the
 * function to call it with Fortran arguments for its files. */
typedef void host_create_errhandler_fn(void *fn, MPI_Fint *eh, MPI_Fint *ierr);
#define P_CREATE_EH (void *fn, MPI_Fint *eh, MPI_Fint *ierr)
void collio_file_create_errhandler_f P_CREATE_EH;
void collio_file_create_errhandler_f P_CREATE_EH
{
	host_create_errhandler_fn *host = (host_create_errhandler_fn *)dlsym(RTLD_NEXT, "ompi_file_create_errhandler_f");
	MPI_Fint rc = MPI_ERR_INTERN;
	if (host == NULL) {
		set_ierr(ierr, MPI_ERR_INTERN);
		return;
	}
	host(fn, eh, &rc);
	if (rc == MPI_SUCCESS)
		collio_remember_fortran_errhandler(PMPI_Errhandler_f2c(*eh), fn);
	set_ierr(ierr, rc);
}
ALIASES(file_create_errhandler, FILE_CREATE_ERRHANDLER, File_create_errhandler, P_CREATE_EH);

/* -------------------------------------------------------------- finalize */

/* MPI_Finalize waits for the E10 cache's deferred closes (init_finalize.c). */
#define P_FINALIZE (MPI_Fint * ierr)
void collio_finalize_f P_FINALIZE;
void collio_finalize_f P_FINALIZE { set_ierr(ierr, MPI_Finalize()); }
ALIASES(finalize, FINALIZE, Finalize, P_FINALIZE);
