/* callcost: what one small collective MPI-IO call costs, in plain C.
 *
 * Each rank owns the contiguous segment [r*K*B, (r+1)*K*B) of one shared
 * file. The timed write phase makes K calls MPI_File_write_at_all of B bytes
 * (call i at r*K*B + i*B: no two ranks touch the same bytes, and nothing has
 * to move between ranks), then the timed read phase K calls
 * MPI_File_read_at_all of the same pieces, and every byte read is checked.
 * The byte at file offset o is a hash of o, so misplaced data is caught.
 *
 * With -o N, a third timed phase opens and closes the file N times
 * (MPI_File_open + MPI_File_close, the fixed cost IOR pays per file).
 *
 * With -s N, N MPI_File_write_shared calls of B bytes per rank into a second
 * file (FILE.shared), every rank at once: what the shared file pointer costs.
 * Each record holds its rank and number; rank 0 then checks that the file
 * holds every record exactly once (none lost to a racing pointer update).
 *
 * With -z N, N more writes and then N reads of each rank's first piece, the
 * same page-cache range every time, and the same N times with pwrite and
 * pread on the file opened by open(2): what a call costs above its system
 * call, with the data copy's cache misses out of the way.
 *
 * Output, one line on rank 0 (phase time from the first rank's start to the
 * last rank's end, as IOR measures; microseconds per call = phase time / K;
 * MiB/s over all ranks; rank_write_s/rank_read_s: the slowest rank's own time):
 *   callcost write_us=... read_us=... write_MiBs=... read_MiBs=... bytes=... np=... calls=K B=...
 *   write_s=... read_s=... rank_write_s=... rank_read_s=...
 *   open_us=... (per open+close pair; 0 without -o)
 *   shared_us=... (slowest rank's mean per write_shared call; 0 without -s)
 *   hot_write_us=... hot_read_us=... pwrite_us=... pread_us=... (slowest rank's mean per call; 0 without -z)
 *
 * Build: mpicc -O2 -Wall -o callcost callcost.c
 * Usage: mpirun -np 4 ./callcost [-c K] [-b B] [-o N] [-s N] [-z N] [-f FILE] [-H k=v,k=v] [-k]
 * Exit status: 0 on success, 1 when a byte read differs, 2 for usage errors;
 * an MPI-IO error aborts the job. */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "common.h"

static void usage(void)
{
	fprintf(stderr,
	        "usage: callcost [-c K] [-b B] [-o N] [-s N] [-z N] [-f FILE] [-H key=val,...] [-k]\n"
	        "  -c K      collective calls per phase (default 1000): K writes, then K reads\n"
	        "  -b B      bytes per call and rank (default 16k; suffix k, m, g)\n"
	        "  -o N      then time N MPI_File_open + MPI_File_close pairs (default 0)\n"
	        "  -s N      then N MPI_File_write_shared calls of B bytes per rank into FILE.shared (default 0)\n"
	        "  -z N      then N writes and N reads of one piece per rank, and as many pwrite/pread (default 0)\n"
	        "  -f FILE   file (default ./callcost.dat); removed at the end unless -k\n"
	        "  -H hints  MPI_Info hints for MPI_File_open, e.g. -H romio_cb_write=disable,romio_cb_read=disable\n"
	        "  -k        keep the file\n");
}

static inline unsigned char byte_at(uint64_t off)
{
	uint64_t x = off * 0x9E3779B97F4A7C15ull;
	return (unsigned char)(x >> 56);
}

/* shared_phase makes n MPI_File_write_shared calls of b bytes (b >= 16) on
 * every rank into path.shared, each record holding (rank, number), and
 * returns the slowest rank's mean seconds per call, or -1 on every rank
 * when rank 0 does not find every record exactly once. */
static double shared_phase(const char *path, MPI_Info info, long long n, long long b)
{
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	char name[4096];
	snprintf(name, sizeof name, "%s.shared", path);
	if (rank == 0)
		MPI_File_delete(name, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File fh;
	CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "MPI_File_open");
	unsigned char *rec = calloc(1, (size_t)b);
	long long *seen = rank == 0 ? calloc((size_t)(n * np), sizeof *seen) : NULL;
	if (rec == NULL || (rank == 0 && seen == NULL))
		MPI_Abort(MPI_COMM_WORLD, 3);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long long i = 0; i < n; i++) {
		long long id[2] = {rank, i};
		memcpy(rec, id, sizeof id);
		CHECK(MPI_File_write_shared(fh, rec, (int)b, MPI_BYTE, MPI_STATUS_IGNORE), "MPI_File_write_shared");
	}
	double t = max_time(MPI_Wtime() - t0) / n;
	CHECK(MPI_File_close(&fh), "MPI_File_close");
	MPI_Barrier(MPI_COMM_WORLD);
	int bad = 0;
	if (rank == 0) {
		CHECK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, info, &fh), "MPI_File_open");
		MPI_Offset size;
		CHECK(MPI_File_get_size(fh, &size), "MPI_File_get_size");
		bad = size != n * np * b;
		for (long long k = 0; !bad && k < n * np; k++) {
			long long id[2];
			CHECK(MPI_File_read_at(fh, k * b, rec, (int)b, MPI_BYTE, MPI_STATUS_IGNORE), "MPI_File_read_at");
			memcpy(id, rec, sizeof id);
			bad = id[0] < 0 || id[0] >= np || id[1] < 0 || id[1] >= n || seen[id[0] * n + id[1]]++;
		}
		CHECK(MPI_File_close(&fh), "MPI_File_close");
		if (bad)
			fprintf(stderr, "callcost: -s: %s does not hold every record of the shared writes exactly once "
			        "(size %lld, want %lld)\n", name, (long long)size, n * np * b);
		MPI_File_delete(name, MPI_INFO_NULL);
	}
	free(rec);
	free(seen);
	return any_failed(bad) ? -1 : t;
}

int main(int argc, char **argv)
{
	int rank, np, keep = 0;
	long long calls = 1000, b = 16 << 10, opens = 0, hot = 0, shared = 0;
	const char *path = "callcost.dat", *hints = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);

	int opt, bad_usage = 0;
	while ((opt = getopt(argc, argv, "c:b:o:s:z:f:H:kh")) != -1) {
		switch (opt) {
		case 'c':
			calls = atoll(optarg);
			if (calls <= 0)
				bad_usage = 1;
			break;
		case 'b':
			b = parse_size(optarg);
			if (b <= 0 || b > 1 << 30)
				bad_usage = 1;
			break;
		case 'o':
			opens = atoll(optarg);
			if (opens < 0)
				bad_usage = 1;
			break;
		case 's':
			shared = atoll(optarg);
			if (shared < 0)
				bad_usage = 1;
			break;
		case 'z':
			hot = atoll(optarg);
			if (hot < 0)
				bad_usage = 1;
			break;
		case 'f': path = optarg; break;
		case 'H': hints = optarg; break;
		case 'k': keep = 1; break;
		default: bad_usage = 1; break;
		}
	}
	if (optind != argc || (shared > 0 && b < 16)) /* a record holds two long longs */
		bad_usage = 1;
	MPI_Info info;
	if (!bad_usage && make_info(hints, &info) != 0) {
		if (rank == 0)
			fprintf(stderr, "callcost: -H %s: want key=value[,key=value...]\n", hints);
		bad_usage = 1;
	}
	if (bad_usage) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}

	size_t seg = (size_t)calls * (size_t)b;
	MPI_Offset base = (MPI_Offset)rank * (MPI_Offset)seg;
	unsigned char *wbuf = malloc(seg), *rbuf = malloc(seg);
	if (wbuf == NULL || rbuf == NULL) {
		fprintf(stderr, "rank %d: out of memory for 2 x %zu bytes\n", rank, seg);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	for (size_t i = 0; i < seg; i++)
		wbuf[i] = byte_at((uint64_t)base + i);
	memset(rbuf, 0, seg);

	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL); /* a missing file is fine */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File fh;
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "MPI_File_open");
	MPI_Status st;
	int count = (int)b;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long long i = 0; i < calls; i++)
		CHECK(MPI_File_write_at_all(fh, base + i * b, wbuf + i * b, count, MPI_BYTE, &st), "MPI_File_write_at_all");
	double t1 = MPI_Wtime();
	double wt = span_time(t0, t1), wt_rank = max_time(t1 - t0);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (long long i = 0; i < calls; i++)
		CHECK(MPI_File_read_at_all(fh, base + i * b, rbuf + i * b, count, MPI_BYTE, &st), "MPI_File_read_at_all");
	t1 = MPI_Wtime();
	double rt = span_time(t0, t1), rt_rank = max_time(t1 - t0);

	long bad = 0;
	for (size_t i = 0; i < seg; i++)
		if (rbuf[i] != wbuf[i]) {
			if (bad < 5)
				fprintf(stderr, "rank %d: byte at offset %lld: read %d, want %d\n", rank, (long long)(base + i),
				        rbuf[i], wbuf[i]);
			bad++;
		}
	/* -z: one page-cache range per rank, through MPI-IO, then the bare
	 * system calls on it. */
	double hw = 0, hr = 0, pw = 0, pr = 0;
	if (hot > 0) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (long long i = 0; i < hot; i++)
			CHECK(MPI_File_write_at_all(fh, base, wbuf, count, MPI_BYTE, &st), "MPI_File_write_at_all");
		hw = max_time(MPI_Wtime() - t0) / hot;
		t0 = MPI_Wtime();
		for (long long i = 0; i < hot; i++)
			CHECK(MPI_File_read_at_all(fh, base, rbuf, count, MPI_BYTE, &st), "MPI_File_read_at_all");
		hr = max_time(MPI_Wtime() - t0) / hot;
		int fd = open(path, O_RDWR);
		int ok = fd >= 0;
		t0 = MPI_Wtime();
		for (long long i = 0; ok && i < hot; i++)
			ok = pwrite(fd, wbuf, (size_t)b, (off_t)base) == (ssize_t)b;
		pw = MPI_Wtime() - t0;
		t0 = MPI_Wtime();
		for (long long i = 0; ok && i < hot; i++)
			ok = pread(fd, rbuf, (size_t)b, (off_t)base) == (ssize_t)b;
		pr = MPI_Wtime() - t0;
		if (fd >= 0)
			close(fd);
		if (any_failed(!ok)) {
			if (rank == 0)
				fprintf(stderr, "callcost: -z: pwrite/pread on %s failed; reporting -1\n", path);
			pw = pr = -hot * 1e-6;
		}
		pw = max_time(pw) / hot, pr = max_time(pr) / hot;
	}
	CHECK(MPI_File_close(&fh), "MPI_File_close");

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (long long i = 0; i < opens; i++) {
		CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "MPI_File_open");
		CHECK(MPI_File_close(&fh), "MPI_File_close");
	}
	double ot = opens > 0 ? max_time(MPI_Wtime() - t0) : 0;

	double sh = shared > 0 ? shared_phase(path, info, shared, b) : 0;
	if (sh < 0)
		bad++;

	int failed = any_failed(bad != 0);
	if (!keep && rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);

	double bytes = (double)seg * np;
	if (rank == 0) {
		if (failed)
			fprintf(stderr, "callcost: verification FAILED\n");
		printf("callcost write_us=%.2f read_us=%.2f write_MiBs=%.1f read_MiBs=%.1f bytes=%.0f np=%d calls=%lld B=%lld "
		       "write_s=%.6f read_s=%.6f rank_write_s=%.6f rank_read_s=%.6f open_us=%.2f opens=%lld "
		       "shared_us=%.2f hot_write_us=%.3f hot_read_us=%.3f pwrite_us=%.3f pread_us=%.3f verified=%s\n",
		       wt / calls * 1e6, rt / calls * 1e6, bytes / MIB / wt, bytes / MIB / rt, bytes, np, calls, b, wt, rt,
		       wt_rank, rt_rank,
		       opens > 0 ? ot / opens * 1e6 : 0.0, opens, sh > 0 ? sh * 1e6 : 0.0, hw * 1e6, hr * 1e6, pw * 1e6, pr * 1e6,
		       failed ? "no" : "yes");
		fflush(stdout);
	}
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	free(wbuf);
	free(rbuf);
	MPI_Finalize();
	return failed ? 1 : 0;
}
