/* collperf: a coll_perf-style MPI-IO benchmark in plain C (after ROMIO's
 * test/coll_perf.c; this is collio's own code).
 *
 * A 3-D array of ints of global size N x N x N is block-distributed over a
 * 3-D process grid from MPI_Dims_create. Each rank's file view is its block
 * (MPI_Type_create_darray, C order), so one MPI_File_write_all writes the
 * whole array as one file "tile" of N^3 ints. The timed write phase makes R
 * such calls back to back (tile r at file offset r * N^3 * 4, as the file
 * pointer advances through the view), then the timed read phase reads the R
 * tiles back with R MPI_File_read_all calls, and every value read is checked.
 * The value at global element g of tile r is (uint32)(r * N^3 + g).
 *
 * Output, one line on rank 0 (bandwidths in MiB/s over all ranks; phase time
 * from the first rank's start to the last rank's end, as IOR measures;
 * rank_write_s/rank_read_s: the slowest rank's own time, coll_perf's measure):
 *   collperf write_MiBs=... read_MiBs=... bytes=... np=... N=... reps=... write_s=... read_s=...
 *            rank_write_s=... rank_read_s=... verified=...
 *
 * Build: mpicc -O2 -Wall -o collperf collperf.c
 * Usage: mpirun -np 4 ./collperf [-n N | -s BYTES] [-r R] [-f FILE] [-H k=v,k=v] [-e] [-w] [-k] [-v]
 * Exit status: 0 on success, 1 when a value read differs, 2 for usage
 * errors; an MPI-IO error aborts the job. */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "common.h"

static void usage(void)
{
	fprintf(stderr,
	        "usage: collperf [-n N | -s BYTES] [-r R] [-f FILE] [-H key=val,...] [-e] [-w] [-k] [-v]\n"
	        "  -n N      global array N x N x N ints (default 128: 8 MiB)\n"
	        "  -s BYTES  instead of -n: N such that each rank's share is about BYTES per call\n"
	        "            (suffix k, m, g); N = round(cbrt(BYTES * np / 4))\n"
	        "  -r R      collective calls per phase (default 4): R writes, then R reads\n"
	        "  -f FILE   file (default ./collperf.dat); removed at the end unless -k\n"
	        "  -H hints  MPI_Info hints for MPI_File_open, e.g. -H cb_buffer_size=4m,romio_cb_write=enable\n"
	        "  -e        MPI_File_sync at the end of the write phase, inside its time (as IOR -e)\n"
	        "  -w        one untimed write_all and read_all of the first tile first\n"
	        "  -k        keep the file\n"
	        "  -v        print the effective hints (MPI_File_get_info) on rank 0\n");
}

struct grid {
	int dims[3], coords[3];
	int lsize[3];  /* the block's extent in each dimension (may be 0) */
	int lstart[3]; /* its first global index in each dimension */
};

static void make_grid(int np, int rank, int n, struct grid *g)
{
	memset(g->dims, 0, sizeof g->dims);
	MPI_Dims_create(np, 3, g->dims);
	/* darray's process grid is in C order: the last dimension varies fastest. */
	g->coords[2] = rank % g->dims[2];
	g->coords[1] = (rank / g->dims[2]) % g->dims[1];
	g->coords[0] = rank / (g->dims[1] * g->dims[2]);
	for (int d = 0; d < 3; d++) {
		/* MPI_DISTRIBUTE_BLOCK with MPI_DISTRIBUTE_DFLT_DARG: blocks of ceil(N/p). */
		int blk = (n + g->dims[d] - 1) / g->dims[d];
		int start = g->coords[d] * blk;
		int size = n - start;
		if (size > blk)
			size = blk;
		if (size < 0)
			size = 0;
		g->lstart[d] = start;
		g->lsize[d] = size;
	}
}

/* fill writes tile r's values for this rank's block into buf. */
static void fill(int *buf, const struct grid *g, int n, int r)
{
	uint32_t base = (uint32_t)r * (uint32_t)n * (uint32_t)n * (uint32_t)n;
	size_t k = 0;
	for (int i = 0; i < g->lsize[0]; i++)
		for (int j = 0; j < g->lsize[1]; j++) {
			uint32_t row = base + ((uint32_t)(g->lstart[0] + i) * n + (uint32_t)(g->lstart[1] + j)) * n +
			               (uint32_t)g->lstart[2];
			for (int l = 0; l < g->lsize[2]; l++)
				buf[k++] = (int)(row + (uint32_t)l);
		}
}

/* check compares a block read back with tile r's values; it returns the
 * number of wrong values and prints the first few. */
static long check(const int *buf, const struct grid *g, int n, int r, int rank)
{
	uint32_t base = (uint32_t)r * (uint32_t)n * (uint32_t)n * (uint32_t)n;
	size_t k = 0;
	long bad = 0;
	for (int i = 0; i < g->lsize[0]; i++)
		for (int j = 0; j < g->lsize[1]; j++) {
			uint32_t row = base + ((uint32_t)(g->lstart[0] + i) * n + (uint32_t)(g->lstart[1] + j)) * n +
			               (uint32_t)g->lstart[2];
			for (int l = 0; l < g->lsize[2]; l++, k++) {
				int want = (int)(row + (uint32_t)l);
				if (buf[k] != want) {
					if (bad < 5)
						fprintf(stderr, "rank %d: tile %d element (%d,%d,%d): read %d, want %d\n", rank, r,
						        g->lstart[0] + i, g->lstart[1] + j, g->lstart[2] + l, buf[k], want);
					bad++;
				}
			}
		}
	return bad;
}

int main(int argc, char **argv)
{
	int rank, np;
	int n = 128, reps = 4, do_sync = 0, warm = 0, keep = 0, verbose = 0;
	long long per_rank = -1;
	const char *path = "collperf.dat", *hints = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);

	int opt, bad_usage = 0;
	while ((opt = getopt(argc, argv, "n:s:r:f:H:ewkvh")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			if (n <= 0)
				bad_usage = 1;
			break;
		case 's':
			per_rank = parse_size(optarg);
			if (per_rank <= 0)
				bad_usage = 1;
			break;
		case 'r':
			reps = atoi(optarg);
			if (reps <= 0)
				bad_usage = 1;
			break;
		case 'f': path = optarg; break;
		case 'H': hints = optarg; break;
		case 'e': do_sync = 1; break;
		case 'w': warm = 1; break;
		case 'k': keep = 1; break;
		case 'v': verbose = 1; break;
		default: bad_usage = 1; break;
		}
	}
	if (optind != argc)
		bad_usage = 1;
	if (per_rank > 0) {
		n = (int)lround(cbrt((double)per_rank * np / 4.0));
		if (n < 1)
			n = 1;
	}
	MPI_Info info;
	if (!bad_usage && make_info(hints, &info) != 0) {
		if (rank == 0)
			fprintf(stderr, "collperf: -H %s: want key=value[,key=value...]\n", hints);
		bad_usage = 1;
	}
	/* Values are uint32 element indices; the view's extent is an int count. */
	if (!bad_usage && (double)n * n * n * sizeof(int) > 2147483647.0) {
		if (rank == 0)
			fprintf(stderr, "collperf: N=%d is too large (N^3 * 4 bytes must fit in an int)\n", n);
		bad_usage = 1;
	}
	if (bad_usage) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}

	struct grid g;
	make_grid(np, rank, n, &g);
	size_t local = (size_t)g.lsize[0] * g.lsize[1] * g.lsize[2];
	int *wbuf = malloc((local ? local : 1) * reps * sizeof(int));
	int *rbuf = malloc((local ? local : 1) * reps * sizeof(int));
	if (wbuf == NULL || rbuf == NULL) {
		fprintf(stderr, "rank %d: out of memory for %zu ints\n", rank, 2 * local * reps);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	for (int r = 0; r < reps; r++)
		fill(wbuf + local * r, &g, n, r);
	memset(rbuf, 0xff, (local ? local : 1) * reps * sizeof(int));

	int gsizes[3] = {n, n, n};
	int distribs[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
	int dargs[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
	MPI_Datatype ftype;
	MPI_Type_create_darray(np, rank, 3, gsizes, distribs, dargs, g.dims, MPI_ORDER_C, MPI_INT, &ftype);
	MPI_Type_commit(&ftype);

	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL); /* a missing file is fine */
	MPI_Barrier(MPI_COMM_WORLD);

	MPI_File fh;
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "MPI_File_open");
	CHECK(MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", info), "MPI_File_set_view");
	if (verbose && rank == 0) {
		MPI_Info used;
		int nkeys = 0;
		MPI_File_get_info(fh, &used);
		MPI_Info_get_nkeys(used, &nkeys);
		for (int i = 0; i < nkeys; i++) {
			char key[MPI_MAX_INFO_KEY + 1], val[1024];
			int flag = 0;
			MPI_Info_get_nthkey(used, i, key);
			MPI_Info_get(used, key, sizeof val - 1, val, &flag);
			if (flag)
				fprintf(stderr, "hint %s=%s\n", key, val);
		}
		MPI_Info_free(&used);
	}
	int count = (int)local;
	MPI_Status st;

	if (warm) {
		CHECK(MPI_File_write_all(fh, wbuf, count, MPI_INT, &st), "MPI_File_write_all (warm-up)");
		CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET), "MPI_File_seek");
		CHECK(MPI_File_read_all(fh, rbuf, count, MPI_INT, &st), "MPI_File_read_all (warm-up)");
		CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET), "MPI_File_seek");
	}

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int r = 0; r < reps; r++)
		CHECK(MPI_File_write_all(fh, wbuf + local * r, count, MPI_INT, &st), "MPI_File_write_all");
	if (do_sync)
		CHECK(MPI_File_sync(fh), "MPI_File_sync");
	double t1 = MPI_Wtime();
	double wt = span_time(t0, t1), wt_rank = max_time(t1 - t0);

	CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET), "MPI_File_seek");
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int r = 0; r < reps; r++)
		CHECK(MPI_File_read_all(fh, rbuf + local * r, count, MPI_INT, &st), "MPI_File_read_all");
	t1 = MPI_Wtime();
	double rt = span_time(t0, t1), rt_rank = max_time(t1 - t0);

	long bad = 0;
	for (int r = 0; r < reps; r++)
		bad += check(rbuf + local * r, &g, n, r, rank);
	CHECK(MPI_File_close(&fh), "MPI_File_close");
	int failed = any_failed(bad != 0);
	if (!keep && rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);

	double bytes = (double)n * n * n * sizeof(int) * reps;
	if (rank == 0) {
		if (failed)
			fprintf(stderr, "collperf: verification FAILED\n");
		printf("collperf write_MiBs=%.1f read_MiBs=%.1f bytes=%.0f np=%d N=%d reps=%d write_s=%.6f read_s=%.6f "
		       "rank_write_s=%.6f rank_read_s=%.6f verified=%s\n",
		       bytes / MIB / wt, bytes / MIB / rt, bytes, np, n, reps, wt, rt, wt_rank, rt_rank,
		       failed ? "no" : "yes");
		fflush(stdout);
	}
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	MPI_Type_free(&ftype);
	free(wbuf);
	free(rbuf);
	MPI_Finalize();
	return failed ? 1 : 0;
}
