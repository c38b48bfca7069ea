/* Helpers shared by collio's C test programs.
 *
 * Each program takes an output directory, writes its files there, checks
 * what it reads back, and prints "PASS <name>" on rank 0. The same program
 * runs with the host MPI-IO, linked with libcollio, and with libcollio
 * preloaded; run.sh then compares the files byte for byte.
 *
 * COLLIO_EXPECT=1 makes a program fail unless collio serves its MPI_File_*
 * calls, COLLIO_EXPECT=0 unless the host MPI-IO does, so a run cannot pass
 * by silently testing the wrong implementation. Checks of collio-specific
 * behaviour (exact error classes, hint values) run only when collio is
 * loaded. */
#ifndef COLLIO_T_H
#define COLLIO_T_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_UNUSED __attribute__((unused))

static int t_rank, t_size;
static const char *t_name;

#define FAIL(...)                                                                          \
	do {                                                                               \
		fprintf(stderr, "FAIL %s rank %d %s:%d: ", t_name, t_rank, __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                                              \
		fprintf(stderr, "\n");                                                     \
		MPI_Abort(MPI_COMM_WORLD, 1);                                              \
	} while (0)

/* CHECK: an MPI call must succeed. */
#define CHECK(call)                                                                \
	do {                                                                       \
		int rc_ = (call);                                                  \
		if (rc_ != MPI_SUCCESS) {                                          \
			char s_[MPI_MAX_ERROR_STRING];                             \
			int n_ = 0;                                                \
			MPI_Error_string(rc_, s_, &n_);                            \
			FAIL("%s returned %d (%s)", #call, rc_, s_);               \
		}                                                                  \
	} while (0)

#define EXPECT(cond, ...)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "FAIL %s rank %d %s:%d: expected %s: ", t_name, t_rank, \
				__FILE__, __LINE__, #cond);                                \
			fprintf(stderr, __VA_ARGS__);                                      \
			fprintf(stderr, "\n");                                             \
			MPI_Abort(MPI_COMM_WORLD, 1);                                      \
		}                                                                          \
	} while (0)

/* collio is loaded: its version symbol is visible. */
T_UNUSED static int collio_loaded(void) { return dlsym(RTLD_DEFAULT, "collio_version") != NULL; }

/* t_started checks the arguments and COLLIO_EXPECT once MPI is started;
 * it returns the output directory (argv[1]). */
T_UNUSED static const char *t_started(int argc, char **argv, const char *name)
{
	const char *expect = getenv("COLLIO_EXPECT");
	t_name = name;
	MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &t_size);
	if (argc < 2)
		FAIL("usage: %s OUTDIR", argv[0]);
	if (expect != NULL && *expect == '1' && !collio_loaded())
		FAIL("COLLIO_EXPECT=1 but libcollio is not loaded");
	if (expect != NULL && *expect == '0' && collio_loaded())
		FAIL("COLLIO_EXPECT=0 but libcollio is loaded");
	return argv[1];
}

/* t_init starts MPI and checks COLLIO_EXPECT; it returns the output
 * directory (argv[1]). */
T_UNUSED static const char *t_init(int *argc, char ***argv, const char *name)
{
	MPI_Init(argc, argv);
	return t_started(*argc, *argv, name);
}

/* t_init_thread is t_init with MPI_Init_thread (the level provided goes
 * to *provided). */
T_UNUSED static const char *t_init_thread(int *argc, char ***argv, const char *name, int required, int *provided)
{
	MPI_Init_thread(argc, argv, required, provided);
	return t_started(*argc, *argv, name);
}

T_UNUSED static void t_done(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == 0)
		printf("PASS %s (%s, %d ranks)\n", t_name, collio_loaded() ? "collio" : "host MPI-IO", t_size);
	MPI_Finalize();
}

T_UNUSED static char *t_path(const char *dir, const char *file)
{
	static char buf[8][4096];
	static int next;
	char *p = buf[next++ % 8];
	snprintf(p, sizeof buf[0], "%s/%s", dir, file);
	return p;
}

/* t_count checks a status: count elements of type t, and the element
 * count of basic elements elems. */
T_UNUSED static void t_status(MPI_Status *st, MPI_Datatype t, int count, MPI_Datatype basic, int elems, const char *what)
{
	int n = -1;
	CHECK(MPI_Get_count(st, t, &n));
	EXPECT(n == count, "%s: MPI_Get_count %d, want %d", what, n, count);
	CHECK(MPI_Get_elements(st, basic, &n));
	EXPECT(n == elems, "%s: MPI_Get_elements %d, want %d", what, n, elems);
}

/* The value every test writes at element i of rank r's data. */
T_UNUSED static int t_val(int r, int i) { return r * 1000003 + i * 7 + 1; }

#endif
