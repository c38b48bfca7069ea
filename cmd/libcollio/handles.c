/* collio's file handles in C: a handle is ours when its address lies in
 * the PROT_NONE reservation made here (handles.go hands out the addresses).
 * Every other handle (MPI_FILE_NULL, files opened through the host MPI-IO
 * because their path is passed through) goes to the host's PMPI_File_*
 * function unchanged. Also MPI_File_c2f and MPI_File_f2c, which must know
 * collio's handles. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>

#include "shim_internal.h"
#include "_cgo_export.h"

/* 2^16 handles, 64 bytes apart: a 4 MiB reservation, never touched. */
#define COLLIO_SPAN ((size_t)1 << 22)

static char *handle_base;
static pthread_once_t handle_once = PTHREAD_ONCE_INIT;

static void reserve_handles(void)
{
	void *p = mmap(NULL, COLLIO_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p != MAP_FAILED)
		handle_base = p;
}

void *collio_handle_base(void)
{
	pthread_once(&handle_once, reserve_handles);
	return handle_base;
}

size_t collio_handle_span(void) { return COLLIO_SPAN; }

int collio_is_ours(const void *h)
{
	const char *b = handle_base;
	return b != NULL && (const char *)h >= b && (const char *)h < b + COLLIO_SPAN;
}

MPI_Fint MPI_File_c2f(MPI_File file)
{
	if (!OURS(file))
		return PMPI_File_c2f(file);
	return (MPI_Fint)collioGoFint(H(file));
}

MPI_File MPI_File_f2c(MPI_Fint file)
{
	uintptr_t h = collioGoFromFint((int)file);
	if (h == 1)
		return MPI_FILE_NULL; /* a collio index that is not open */
	if (h != 0)
		return (MPI_File)h;
	return PMPI_File_f2c(file);
}
