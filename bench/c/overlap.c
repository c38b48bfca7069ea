/* overlap: how much of a collective write's (and read's) time a nonblocking
 * call hides behind computation, in plain C.
 *
 * Each rank writes B bytes per call through an interleaved view (blocks of
 * S bytes, rank r's at r*S + k*np*S), so collective buffering has data to
 * move between ranks. First the I/O time alone (T_io, MPI_File_write_all,
 * median of the rounds). Then, for each compute time C = f * T_io (f from
 * -c), the blocking form (compute C, then write_all) against the
 * nonblocking one (iwrite_all, compute C, MPI_Wait); the same for reads.
 * "Compute" sleeps by default (work done elsewhere: other cores, a GPU),
 * or spins with -s (work on this rank's core, which the progress thread
 * then shares). No MPI call is made while computing.
 *
 * Output, one line per direction and C on rank 0 (times: the slowest
 * rank's, median of R rounds, the blocking and nonblocking rounds
 * alternating; hidden = (blocking - nonblocking) / min(C, blocking - C),
 * the share of the I/O time of the blocking rounds that the nonblocking
 * call hid):
 *   overlap op=write compute_ms=... io_ms=... blocking_ms=... nonblocking_ms=... hidden=... np=... B=...
 * With C = 0, nb_ratio = blocking / nonblocking is the nonblocking call's
 * bandwidth against the blocking one's.
 * Every byte read is checked (exit 1 on a mismatch).
 *
 * Build: mpicc -O2 -Wall -o overlap overlap.c
 * Usage: mpirun -np 4 ./overlap [-b B] [-S S] [-r R] [-c f,f,...] [-s] [-f FILE] [-H k=v,...]
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static void usage(void)
{
	fprintf(stderr,
	        "usage: overlap [-b B] [-S S] [-r R] [-c f,f,...] [-s] [-f FILE] [-H key=val,...]\n"
	        "  -b B      bytes per rank and call (default 16m; suffix k, m, g)\n"
	        "  -S S      block size of the interleaved view (default 64k)\n"
	        "  -r R      rounds per measurement, median taken (default 5)\n"
	        "  -c list   compute times as multiples of the I/O time (default 0,0.5,1,2)\n"
	        "  -s        compute by spinning on the core instead of sleeping\n"
	        "  -f FILE   file (default ./overlap.dat), removed at the end\n"
	        "  -H hints  MPI_Info hints for MPI_File_open\n");
}

static int spin;

static void compute(double seconds)
{
	if (seconds <= 0)
		return;
	if (!spin) {
		struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
		nanosleep(&ts, NULL);
		return;
	}
	double end = MPI_Wtime() + seconds;
	volatile double x = 1;
	while (MPI_Wtime() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static MPI_File fh;
static unsigned char *wbuf, *rbuf;
static long long b;
static long bad;
static int rank;

/* one runs one write or read (blocking or not) with compute c seconds,
 * and returns the slowest rank's time. */
static double one(int write, int nonblocking, double c)
{
	MPI_Request req;
	MPI_Status st;
	int count = (int)b;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	if (nonblocking) {
		if (write)
			CHECK(MPI_File_iwrite_at_all(fh, 0, wbuf, count, MPI_BYTE, &req), "MPI_File_iwrite_at_all");
		else
			CHECK(MPI_File_iread_at_all(fh, 0, rbuf, count, MPI_BYTE, &req), "MPI_File_iread_at_all");
		compute(c);
		CHECK(MPI_Wait(&req, &st), "MPI_Wait");
	} else {
		compute(c);
		if (write)
			CHECK(MPI_File_write_at_all(fh, 0, wbuf, count, MPI_BYTE, &st), "MPI_File_write_at_all");
		else
			CHECK(MPI_File_read_at_all(fh, 0, rbuf, count, MPI_BYTE, &st), "MPI_File_read_at_all");
	}
	double t = max_time(MPI_Wtime() - t0);
	if (!write) {
		if (memcmp(rbuf, wbuf, (size_t)b) != 0 && bad++ == 0)
			fprintf(stderr, "rank %d: data read differs from data written\n", rank);
		memset(rbuf, 0, (size_t)b);
	}
	return t;
}

static double timed(int write, int nonblocking, double c, int rounds)
{
	double t[64];
	for (int i = 0; i < rounds; i++)
		t[i] = one(write, nonblocking, c);
	return median(t, rounds);
}

/* timed_pair times the blocking and the nonblocking form in alternating
 * rounds (each goes first every other round), so that a machine whose
 * speed drifts (shared cores, the page cache) shifts both alike. */
static void timed_pair(int write, double c, int rounds, double *blocking, double *nonblocking)
{
	double tb[64], tn[64];
	for (int i = 0; i < rounds; i++) {
		int nb_first = i % 2;
		double first = one(write, nb_first, c), second = one(write, !nb_first, c);
		tb[i] = nb_first ? second : first;
		tn[i] = nb_first ? first : second;
	}
	*blocking = median(tb, rounds);
	*nonblocking = median(tn, rounds);
}

int main(int argc, char **argv)
{
	int np, rounds = 5;
	long long s = 64 << 10;
	const char *path = "overlap.dat", *hints = NULL, *factors = "0,0.5,1,2";
	b = 16 << 20;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int opt, bad_usage = 0;
	while ((opt = getopt(argc, argv, "b:S:r:c:sf:H:h")) != -1) {
		switch (opt) {
		case 'b': b = parse_size(optarg); break;
		case 'S': s = parse_size(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'c': factors = optarg; break;
		case 's': spin = 1; break;
		case 'f': path = optarg; break;
		case 'H': hints = optarg; break;
		default: bad_usage = 1; break;
		}
	}
	if (b <= 0 || b > 1 << 30 || s <= 0 || b % s != 0 || rounds < 1 || rounds > 64 || optind != argc)
		bad_usage = 1;
	MPI_Info info = MPI_INFO_NULL;
	if (!bad_usage && make_info(hints, &info) != 0)
		bad_usage = 1;
	if (bad_usage) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}

	wbuf = malloc((size_t)b);
	rbuf = calloc(1, (size_t)b);
	if (wbuf == NULL || rbuf == NULL) {
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	for (long long i = 0; i < b; i++)
		wbuf[i] = (unsigned char)((i * 131 + rank * 57 + 1) % 251);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "MPI_File_open");
	MPI_Datatype block, ft;
	MPI_Type_contiguous((int)s, MPI_BYTE, &block);
	MPI_Type_create_resized(block, 0, (MPI_Aint)s * np, &ft);
	MPI_Type_commit(&ft);
	CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * s, MPI_BYTE, ft, "native", MPI_INFO_NULL), "MPI_File_set_view");

	/* Warm-up: the file exists at full size, and whatever an
	 * implementation sets up at its first nonblocking calls is done. */
	one(1, 0, 0);
	for (int i = 0; i < 4; i++)
		one(1, 1, 0);
	for (int write = 1; write >= 0; write--) {
		double io = timed(write, 0, 0, rounds);
		char list[256];
		snprintf(list, sizeof list, "%s", factors);
		for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
			double c = atof(tok) * io;
			double blocking, nonblocking;
			timed_pair(write, c, rounds, &blocking, &nonblocking);
			/* The I/O time hidden is compared with the I/O time of the
			 * blocking rounds themselves (blocking - C): T_io, timed
			 * before on its own, drifts from it. */
			double io_b = blocking - c, m = c < io_b ? c : io_b;
			double hidden = c > 0 && m > 0 ? (blocking - nonblocking) / m : 0;
			if (rank == 0) {
				printf("overlap op=%s compute_ms=%.2f io_ms=%.2f blocking_ms=%.2f nonblocking_ms=%.2f hidden=%.2f",
				       write ? "write" : "read", c * 1e3, io * 1e3, blocking * 1e3, nonblocking * 1e3, hidden);
				if (c == 0)
					printf(" nb_ratio=%.2f", blocking / nonblocking);
				printf(" np=%d B=%lld S=%lld compute=%s\n", np, b, s, spin ? "spin" : "sleep");
				fflush(stdout);
			}
		}
	}
	CHECK(MPI_File_close(&fh), "MPI_File_close");
	int failed = any_failed(bad != 0);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Type_free(&ft);
	MPI_Type_free(&block);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	free(wbuf);
	free(rbuf);
	MPI_Finalize();
	return failed ? 1 : 0;
}
