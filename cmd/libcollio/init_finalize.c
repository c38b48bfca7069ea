/* MPI_Init, MPI_Init_thread and MPI_Finalize, which libcollio interposes:
 * initialisation asks for the thread level collio's nonblocking transfers
 * want and prepares the first open; finalisation waits for the E10
 * cache's deferred closes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "shim_internal.h"
#include "_cgo_export.h"

static int go_opened;

void collio_note_open(void) { __atomic_store_n(&go_opened, 1, __ATOMIC_RELAXED); }

/* MPI_Finalize first waits for the E10 cache's deferred closes: their copies
 * run in Go goroutines that the process exit would cut short. Every rank
 * then returns the same result (the largest error class of any rank), and
 * a rank whose copies failed says why. MPI is the program's: the call goes
 * on to PMPI_Finalize in any case. */
int MPI_Finalize(void)
{
	int init = 0, fin = 0, mine = MPI_SUCCESS, all, rc, rank;
	double t0, t1;

	PMPI_Initialized(&init);
	PMPI_Finalized(&fin);
	if (!init || fin)
		return PMPI_Finalize(); /* erroneous: the host reports it */
	rank = collio_world_rank();
	t0 = PMPI_Wtime();
	/* Without a collio open, skip the first call into Go on this thread
	 * (about 1 ms); the Allreduce is still needed: other ranks may have
	 * opened files on their own communicators. */
	if (__atomic_load_n(&go_opened, __ATOMIC_RELAXED))
		mine = collioGoFinalize();
	t1 = PMPI_Wtime();
	all = mine;
	if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
		all = mine;
	if (collio_verbose() > 0)
		fprintf(stderr, "collio[%d]: MPI_Finalize -> collio: deferred closes %.3f ms, agreement %.3f ms\n",
			rank, 1e3 * (t1 - t0), 1e3 * (PMPI_Wtime() - t1));
	if (mine != MPI_SUCCESS) {
		/* In full: the message ends with how to recover the data. */
		int n = collioGoLastError(NULL, 0);
		char *msg = malloc((size_t)n + 1);
		if (msg != NULL)
			collioGoLastError(msg, n + 1);
		fprintf(stderr, "collio[%d]: MPI_Finalize failed: %s\n", rank, msg != NULL ? msg : "(out of memory)");
		free(msg);
	} else if (all != MPI_SUCCESS) {
		collioGoSetLastError("collio: MPI_Finalize: a deferred close failed on another rank");
		if (collio_verbose() > 0)
			fprintf(stderr, "collio[%d]: MPI_Finalize failed: a deferred close failed on another rank\n",
				rank);
	}
	rc = PMPI_Finalize();
	return all != MPI_SUCCESS ? all : rc;
}

/* Nonblocking collective transfers progress on threads of their own, which
 * needs MPI_THREAD_MULTIPLE: collio asks for it when the program initialises
 * MPI (COLLIO_THREAD_MULTIPLE=0 keeps the program's level; the transfers
 * then run inside their start calls). The program gets at least what it
 * asked for. */
static int want_multiple(void)
{
	return collioGoEnvInt((char *)"COLLIO_THREAD_MULTIPLE") != 0;
}

/* After MPI starts, collioGoWarm makes what the first open on
 * MPI_COMM_WORLD needs (a duplicate, the node layout, the shared file
 * pointer window): a few milliseconds of MPI_Init instead of the open. */
int MPI_Init(int *argc, char ***argv)
{
	int provided, rc;
	if (!want_multiple())
		rc = PMPI_Init(argc, argv);
	else
		rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
	if (rc == MPI_SUCCESS)
		collioGoWarm();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc;
	if (!want_multiple())
		rc = PMPI_Init_thread(argc, argv, required, provided);
	else
		rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided);
	if (rc == MPI_SUCCESS)
		collioGoWarm();
	return rc;
}
