/* lane: many small collective transfers with explicit offsets, and
 * independent reads, the calls libcollio serves in C once Go has armed its
 * fast lane (lane.c), mixed with what must end the lane (also from another
 * thread, while independent reads run): another datatype, a new view, a view with
 * holes, reads past the end of file, and (collio only) a write the file
 * size limit refuses. Files: cbd.dat (romio_cb_write/read=disable) and
 * auto.dat (automatic choice: rechecks every 16 to 256 calls).
 *
 * Linked with libcollio (T_LINKED), collio_file_stats must count every
 * call, as if each had gone through Go; run.sh runs that with the lane on
 * and with COLLIO_FAST_LANE=0, and compares the files with the host
 * MPI-IO's. */
#include "t.h"
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#ifdef T_LINKED
#include <collio.h>
#endif

#define K 300    /* calls per phase */
#define BLK 1024 /* bytes per call and rank */

static MPI_File open_file(const char *dir, const char *name, int cb_disable)
{
	char path[4096];
	MPI_Info info;
	MPI_File fh;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	CHECK(MPI_Info_create(&info));
	if (cb_disable) {
		CHECK(MPI_Info_set(info, "romio_cb_write", "disable"));
		CHECK(MPI_Info_set(info, "romio_cb_read", "disable"));
	}
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
	CHECK(MPI_Info_free(&info));
	return fh;
}

static void fill(unsigned char *b, int n, int i)
{
	for (int k = 0; k < n; k++)
		b[k] = (unsigned char)(i * 131 + t_rank * 17 + k);
}

/* phase: K calls of BLK bytes per rank at byte (i*P + rank)*BLK, written
 * as count elements of dt, then read back and checked. */
static void phase(MPI_File fh, MPI_Offset first, MPI_Datatype dt, int esize, MPI_Offset etype)
{
	unsigned char w[BLK], r[BLK];
	MPI_Status st;
	int count = BLK / esize, got;
	for (int i = 0; i < K; i++) {
		fill(w, BLK, i);
		MPI_Offset off = (first + ((MPI_Offset)i * t_size + t_rank) * BLK) / etype;
		CHECK(MPI_File_write_at_all(fh, off, w, count, dt, &st));
		CHECK(MPI_Get_count(&st, dt, &got));
		EXPECT(got == count, "write %d: count %d, want %d", i, got, count);
	}
	for (int i = 0; i < K; i++) {
		fill(w, BLK, i);
		memset(r, 0xee, BLK);
		MPI_Offset off = (first + ((MPI_Offset)i * t_size + t_rank) * BLK) / etype;
		CHECK(MPI_File_read_at_all(fh, off, r, count, dt, &st));
		CHECK(MPI_Get_count(&st, dt, &got));
		EXPECT(got == count && memcmp(r, w, BLK) == 0, "read %d: count %d, want %d, data %s", i, got, count,
		       memcmp(r, w, BLK) ? "differs" : "equal");
	}
}

/* indep: the first phase's pieces again, with independent reads. */
static void indep(MPI_File fh)
{
	unsigned char w[BLK], r[BLK];
	MPI_Status st;
	int got;
	for (int i = 0; i < K; i++) {
		fill(w, BLK, i);
		memset(r, 0xee, BLK);
		CHECK(MPI_File_read_at(fh, ((MPI_Offset)i * t_size + t_rank) * BLK, r, BLK, MPI_BYTE, &st));
		CHECK(MPI_Get_count(&st, MPI_BYTE, &got));
		EXPECT(got == BLK && memcmp(r, w, BLK) == 0, "independent read %d: count %d, data %s", i, got,
		       memcmp(r, w, BLK) ? "differs" : "equal");
	}
}

/* Independent reads on one thread while another keeps entering Go on the
 * same file (MPI_File_get_size takes the lane back each time): every read
 * is right and, linked, every one is counted. */
#define RACE 2000
static volatile int race_done;

static void *sizes(void *arg)
{
	MPI_File fh = *(MPI_File *)arg;
	MPI_Offset size;
	while (!race_done)
		CHECK(MPI_File_get_size(fh, &size));
	return NULL;
}

static void race(MPI_File fh)
{
	pthread_t th;
	race_done = 0;
	EXPECT(pthread_create(&th, NULL, sizes, &fh) == 0, "pthread_create");
	for (int n = 0; n < RACE; n++) {
		unsigned char w[BLK], r[BLK];
		int i = n % K;
		fill(w, BLK, i);
		CHECK(MPI_File_read_at(fh, ((MPI_Offset)i * t_size + t_rank) * BLK, r, BLK, MPI_BYTE, MPI_STATUS_IGNORE));
		EXPECT(memcmp(r, w, BLK) == 0, "read %d beside get_size: data differs", n);
	}
	race_done = 1;
	pthread_join(th, NULL);
}

/* past_eof: reads that end past the end of the file return what is there
 * (counted under collio only: OMPIO's status counts what was asked). */
static void past_eof(MPI_File fh)
{
	MPI_Offset size;
	unsigned char r[BLK];
	MPI_Status st;
	int got;
	CHECK(MPI_File_get_size(fh, &size));
	for (int i = 0; i < 40; i++) {
		CHECK(MPI_File_read_at_all(fh, size - BLK / 2 + t_rank, r, BLK, MPI_BYTE, &st));
		CHECK(MPI_Get_count(&st, MPI_BYTE, &got));
		EXPECT(!collio_loaded() || got == BLK / 2 - t_rank, "read across the end: %d bytes, want %d", got,
		       BLK / 2 - t_rank);
	}
}

#ifdef T_LINKED
static void expect_calls(MPI_File fh, long long writes, long long wbytes, long long reads, long long rbytes)
{
	collio_stats s;
	CHECK(collio_file_stats(fh, &s));
	const long long n = K + RACE;
	EXPECT(s.independent_read.calls == n && s.independent_read.bytes == n * BLK && s.independent_read.pieces == n,
	       "independent reads %lld (%lld bytes, %lld pieces), want %lld (%lld bytes)", s.independent_read.calls,
	       s.independent_read.bytes, s.independent_read.pieces, n, n * BLK);
	EXPECT(s.collective_write.calls == writes && s.collective_write.bytes == wbytes && s.collective_write.failed == 0,
	       "collective writes %lld (%lld bytes, %lld failed), want %lld (%lld bytes)", s.collective_write.calls,
	       s.collective_write.bytes, s.collective_write.failed, writes, wbytes);
	EXPECT(s.collective_read.calls == reads && s.collective_read.bytes == rbytes,
	       "collective reads %lld (%lld bytes), want %lld (%lld bytes)", s.collective_read.calls,
	       s.collective_read.bytes, reads, rbytes);
	EXPECT(s.collective_write.pieces == writes && s.collective_write.total_ns > 0,
	       "collective write pieces %lld (want %lld), time %lld ns", s.collective_write.pieces, writes,
	       s.collective_write.total_ns);
	EXPECT(strcmp(s.strategy, "independent") == 0, "last strategy %s", s.strategy);
}
#endif

/* too_big: with the file size limit below the next writes, a write fails
 * (EFBIG) and its error reaches the caller; the close then reports it on
 * every rank (collio's deferred agreement). */
static void too_big(const char *dir)
{
	struct rlimit old, lim;
	unsigned char w[BLK];
	MPI_Status st;
	int failed_at = -1, rc = MPI_SUCCESS;
	MPI_File fh = open_file(dir, "big.dat", 0);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 64 * BLK * (rlim_t)t_size;
	setrlimit(RLIMIT_FSIZE, &lim);
	MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
	for (int i = 0; i < 2 * 64 && failed_at < 0; i++) {
		fill(w, BLK, i);
		rc = MPI_File_write_at_all(fh, ((MPI_Offset)i * t_size + t_rank) * BLK, w, BLK, MPI_BYTE, &st);
		if (rc != MPI_SUCCESS)
			failed_at = i;
	}
	setrlimit(RLIMIT_FSIZE, &old);
	EXPECT(failed_at == 64, "the first write past the size limit failed at call %d, want 64", failed_at);
	int cls;
	MPI_Error_class(rc, &cls);
	EXPECT(cls == MPI_ERR_IO || cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA, "error class %d", cls);
	rc = MPI_File_close(&fh);
	EXPECT(rc != MPI_SUCCESS, "close after a failed write returned success");
}

int main(int argc, char **argv)
{
	int provided;
	const char *dir = t_init_thread(&argc, &argv, "lane", MPI_THREAD_MULTIPLE, &provided);
	EXPECT(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
	for (int f = 0; f < 2; f++) {
		MPI_File fh = open_file(dir, f ? "auto.dat" : "cbd.dat", !f);
		long long calls = 0, bytes = 0;
		phase(fh, 0, MPI_BYTE, 1, 1);
		calls += K, bytes += (long long)K * BLK;
		indep(fh);
		race(fh);
		phase(fh, (MPI_Offset)K * t_size * BLK, MPI_DOUBLE, 8, 1); /* another datatype */
		calls += K, bytes += (long long)K * BLK;
		/* A new view: displacement 4 KiB past the data, etype int. */
		MPI_Offset disp = 2LL * K * t_size * BLK + 4096;
		CHECK(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
		phase(fh, 0, MPI_INT, 4, 4);
		calls += K, bytes += (long long)K * BLK;
#ifdef T_LINKED
		expect_calls(fh, calls, bytes, calls, bytes);
#endif
		/* A view with holes, over the first phase's data (whose bytes in
		 * the holes must stay): every call goes through Go. */
		MPI_Datatype vec;
		CHECK(MPI_Type_vector(2, 64, 128, MPI_INT, &vec));
		CHECK(MPI_Type_commit(&vec));
		CHECK(MPI_File_set_view(fh, 0, MPI_INT, vec, "native", MPI_INFO_NULL));
		for (int i = 0; i < 40; i++) {
			int v[128];
			for (int k = 0; k < 128; k++)
				v[k] = i * 1000 + t_rank * 7 + k;
			CHECK(MPI_File_write_at_all(fh, ((MPI_Offset)i * t_size + t_rank) * 128, v, 128, MPI_INT, MPI_STATUS_IGNORE));
		}
		CHECK(MPI_Type_free(&vec));
		CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
		past_eof(fh);
		CHECK(MPI_File_close(&fh));
	}
	if (collio_loaded())
		too_big(dir);
	t_done();
	return 0;
}
