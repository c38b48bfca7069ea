/* COLLIO_VERBOSE: a line on stderr per MPI_File_* call, saying who served
 * it (VIA_COLLIO and VIA_HOST in shim_internal.h). */
#define _GNU_SOURCE
#include <stdio.h>

#include "shim_internal.h"
#include "_cgo_export.h"

static int verbose_level = -1;

int collio_verbose(void)
{
	if (verbose_level < 0)
		verbose_level = collioGoEnvInt((char *)"COLLIO_VERBOSE");
	return verbose_level;
}

int collio_world_rank(void)
{
	int init = 0, fin = 0, rank = -1;
	PMPI_Initialized(&init);
	PMPI_Finalized(&fin);
	if (init && !fin)
		PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	return rank;
}

void shim_trace(const char *name, const char *where)
{
	if (collio_verbose() > 0)
		fprintf(stderr, "collio[%d]: %s -> %s\n", collio_world_rank(), name, where);
}
