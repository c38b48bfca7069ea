/* nonblocking: MPI_File_i* with MPI_Wait, MPI_Test and MPI_Waitall, and
 * the split collectives. File: nb.dat. Each rank owns a 4 KiB region per
 * phase; the layout is the same whichever MPI-IO serves the calls. Then
 * the collective transfers' completion mixed with point-to-point requests
 * (Waitany, Testany, Waitsome, Testall), background progress (the data
 * lands while no rank calls MPI), MPI_Request_free before completion, and,
 * under collio, an error found after the start coming back from MPI_Wait
 * through the file's error handler. */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "t.h"

#define K 256 /* ints per rank per phase */

static MPI_Offset region(int phase) { return ((MPI_Offset)phase * t_size + t_rank) * K * sizeof(int); }

static void fill(int *b, int phase)
{
	for (int i = 0; i < K; i++)
		b[i] = t_val(t_rank, phase * K + i);
}

static void check(const int *b, int phase, const char *what)
{
	for (int i = 0; i < K; i++)
		if (b[i] != t_val(t_rank, phase * K + i))
			FAIL("%s: element %d is %d, want %d", what, i, b[i], t_val(t_rank, phase * K + i));
}

int main(int argc, char **argv)
{
	const char *dir = t_init(&argc, &argv, "nonblocking");
	/* Under collio MPI_Init asks for MPI_THREAD_MULTIPLE, which background
	 * progress needs; COLLIO_THREAD_MULTIPLE=0 keeps the program's level,
	 * and the transfers then run inside their start calls. */
	if (collio_loaded()) {
		const char *keep = getenv("COLLIO_THREAD_MULTIPLE");
		int kept = keep != NULL && strcmp(keep, "0") == 0, level = -1;
		CHECK(MPI_Query_thread(&level));
		EXPECT((level == MPI_THREAD_MULTIPLE) != kept, "thread level %d with COLLIO_THREAD_MULTIPLE=%s", level,
		       keep != NULL ? keep : "(unset)");
	}
	MPI_File fh;
	MPI_Request req[4];
	MPI_Status st, sts[4];
	int w[6][K], r[6][K], flag;

	for (int p = 0; p < 6; p++)
		fill(w[p], p);
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "nb.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

	/* Phase 0: iwrite_at + MPI_Wait. */
	CHECK(MPI_File_iwrite_at(fh, region(0), w[0], K, MPI_INT, &req[0]));
	CHECK(MPI_Wait(&req[0], &st));
	EXPECT(req[0] == MPI_REQUEST_NULL, "request freed by MPI_Wait");
	t_status(&st, MPI_INT, K, MPI_INT, K, "iwrite_at");

	/* Phase 1: iwrite at the individual pointer, polled with MPI_Test. */
	CHECK(MPI_File_seek(fh, region(1), MPI_SEEK_SET));
	CHECK(MPI_File_iwrite(fh, w[1], K, MPI_INT, &req[0]));
	flag = 0;
	while (!flag)
		CHECK(MPI_Test(&req[0], &flag, &st));
	t_status(&st, MPI_INT, K, MPI_INT, K, "iwrite");
	{
		MPI_Offset pos;
		CHECK(MPI_File_get_position(fh, &pos));
		EXPECT(pos == region(1) + K * 4, "position after iwrite %lld", (long long)pos);
	}

	/* Phase 2 and 3: collective nonblocking writes, completed together. */
	CHECK(MPI_File_iwrite_at_all(fh, region(2), w[2], K, MPI_INT, &req[0]));
	CHECK(MPI_File_seek(fh, region(3), MPI_SEEK_SET));
	CHECK(MPI_File_iwrite_all(fh, w[3], K, MPI_INT, &req[1]));
	CHECK(MPI_Waitall(2, req, sts));
	t_status(&sts[0], MPI_INT, K, MPI_INT, K, "iwrite_at_all");
	t_status(&sts[1], MPI_INT, K, MPI_INT, K, "iwrite_all");

	/* Phase 4 and 5: split collectives. */
	CHECK(MPI_File_write_at_all_begin(fh, region(4), w[4], K, MPI_INT));
	CHECK(MPI_File_write_at_all_end(fh, w[4], &st));
	t_status(&st, MPI_INT, K, MPI_INT, K, "write_at_all_end");
	CHECK(MPI_File_seek(fh, region(5), MPI_SEEK_SET));
	CHECK(MPI_File_write_all_begin(fh, w[5], K / 2, MPI_DOUBLE));
	CHECK(MPI_File_write_all_end(fh, w[5], &st));
	t_status(&st, MPI_DOUBLE, K / 2, MPI_DOUBLE, K / 2, "write_all_end");
	CHECK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(MPI_File_sync(fh));

	/* Read everything back, each phase in a different way. */
	memset(r, 0, sizeof r);
	CHECK(MPI_File_iread_at(fh, region(0), r[0], K, MPI_INT, &req[0]));
	CHECK(MPI_File_seek(fh, region(1), MPI_SEEK_SET));
	CHECK(MPI_File_iread(fh, r[1], K, MPI_INT, &req[1]));
	CHECK(MPI_Waitall(2, req, sts));
	t_status(&sts[0], MPI_INT, K, MPI_INT, K, "iread_at");
	t_status(&sts[1], MPI_INT, K, MPI_INT, K, "iread");
	CHECK(MPI_File_iread_at_all(fh, region(2), r[2], K, MPI_INT, &req[0]));
	CHECK(MPI_Wait(&req[0], &st));
	t_status(&st, MPI_INT, K, MPI_INT, K, "iread_at_all");
	CHECK(MPI_File_seek(fh, region(3), MPI_SEEK_SET));
	CHECK(MPI_File_iread_all(fh, r[3], K, MPI_INT, &req[0]));
	CHECK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
	CHECK(MPI_File_read_at_all_begin(fh, region(4), r[4], K, MPI_INT));
	CHECK(MPI_File_read_at_all_end(fh, r[4], &st));
	t_status(&st, MPI_INT, K, MPI_INT, K, "read_at_all_end");
	CHECK(MPI_File_seek(fh, region(5), MPI_SEEK_SET));
	CHECK(MPI_File_read_all_begin(fh, r[5], K, MPI_INT));
	CHECK(MPI_File_read_all_end(fh, r[5], &st));
	t_status(&st, MPI_INT, K, MPI_INT, K, "read_all_end");
	for (int p = 0; p < 6; p++)
		check(r[p], p, "read back");

	/* A nonblocking read at the end of file is short. (Open MPI 4.1's
	 * OMPIO never completes this request, so only collio is tested.) */
	if (collio_loaded()) {
		MPI_Offset size;
		int n;
		CHECK(MPI_File_get_size(fh, &size));
		CHECK(MPI_File_iread_at(fh, size - 8, r[0], K, MPI_INT, &req[0]));
		CHECK(MPI_Wait(&req[0], &st));
		CHECK(MPI_Get_count(&st, MPI_INT, &n));
		EXPECT(n == 2, "short nonblocking read: %d ints", n);
	}

	/* Collective transfers completed among point-to-point requests. */
	{
		int token = t_rank, got = -1, index, outcount, indices[3];
		MPI_Request mix[3];
		CHECK(MPI_Irecv(&got, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &mix[0]));
		CHECK(MPI_File_iwrite_at_all(fh, region(6), w[0], K, MPI_INT, &mix[1]));
		CHECK(MPI_Isend(&token, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &mix[2]));
		int left = 3;
		while (left > 0) {
			CHECK(MPI_Waitany(3, mix, &index, &st));
			EXPECT(index != MPI_UNDEFINED, "waitany found nothing with %d left", left);
			left--;
		}
		EXPECT(got == t_rank, "message %d", got);
		/* Another node's aggregator may have written this rank's data,
		 * and its client may still hold it (the host MPI-IO on
		 * GlusterFS once read zeros here): sync-barrier-sync, as MPI
		 * asks before reading what another process wrote. */
		CHECK(MPI_File_sync(fh));
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_File_sync(fh));
		CHECK(MPI_File_iread_at_all(fh, region(6), r[0], K, MPI_INT, &mix[0]));
		CHECK(MPI_Irecv(&got, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &mix[1]));
		CHECK(MPI_Isend(&token, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &mix[2]));
		for (left = 3; left > 0;) {
			CHECK(MPI_Waitsome(3, mix, &outcount, indices, sts));
			if (outcount != MPI_UNDEFINED)
				left -= outcount;
		}
		check(r[0], 0, "iread_at_all among point-to-point requests");
		CHECK(MPI_File_iwrite_at_all(fh, region(7), w[1], K, MPI_INT, &mix[0]));
		CHECK(MPI_File_iread_at_all(fh, region(6), r[1], K, MPI_INT, &mix[1]));
		for (flag = 0; !flag;)
			CHECK(MPI_Testall(2, mix, &flag, sts));
		t_status(&sts[0], MPI_INT, K, MPI_INT, K, "testall");
		check(r[1], 0, "testall's read");
		CHECK(MPI_File_iwrite_at_all(fh, region(8), w[2], K, MPI_INT, &mix[0]));
		for (flag = 0; !flag;)
			CHECK(MPI_Testany(1, mix, &index, &flag, &st));
		EXPECT(index == 0, "testany index %d", index);
	}

	/* Background progress: after the start nobody calls MPI until this
	 * rank's data is in the file (read with POSIX calls), at most 30 s. */
	{
		CHECK(MPI_File_iwrite_at_all(fh, region(9), w[3], K, MPI_INT, &req[0]));
		int fd = open(t_path(dir, "nb.dat"), O_RDONLY);
		EXPECT(fd >= 0, "open nb.dat for reading");
		int landed = 0;
		for (int tries = 0; fd >= 0 && tries < 30000 && !landed; tries++) {
			int b[K];
			landed = pread(fd, b, sizeof b, region(9)) == (ssize_t)sizeof b && memcmp(b, w[3], sizeof b) == 0;
			if (!landed)
				nanosleep(&(struct timespec){0, 1000000}, NULL);
		}
		EXPECT(landed, "the write did not progress while no rank called MPI");
		if (fd >= 0)
			close(fd);
		CHECK(MPI_Wait(&req[0], &st));
		t_status(&st, MPI_INT, K, MPI_INT, K, "background write");
	}

	CHECK(MPI_File_close(&fh));

	if (collio_loaded()) {
		/* A request freed before it completes: the data still lands.
		 * (Open MPI 4.1's OMPIO drops it: collio only, another file.) */
		MPI_File fr;
		CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "freed.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
				    &fr));
		CHECK(MPI_File_iwrite_at_all(fr, region(0), w[4], K, MPI_INT, &req[0]));
		CHECK(MPI_Request_free(&req[0]));
		CHECK(MPI_File_close(&fr));
		int fd = open(t_path(dir, "freed.dat"), O_RDONLY), b[K];
		EXPECT(fd >= 0 && pread(fd, b, sizeof b, region(0)) == (ssize_t)sizeof b && memcmp(b, w[4], sizeof b) == 0,
		       "the write whose request was freed did not land");
		if (fd >= 0)
			close(fd);
		MPI_Barrier(MPI_COMM_WORLD);
		if (t_rank == 0)
			CHECK(MPI_File_delete(t_path(dir, "freed.dat"), MPI_INFO_NULL));
	}

	if (collio_loaded()) {
		/* Every rank's first write fails (collio's fault-injecting driver,
		 * two-phase so data crosses ranks): MPI_Wait returns the error,
		 * through the file's handler (MPI_ERRORS_RETURN), on every rank. */
		MPI_Info info;
		MPI_File ff;
		MPI_Info_create(&info);
		MPI_Info_set(info, "collio_fault", "eio_call=write:1");
		MPI_Info_set(info, "collio_strategy", "twophase");
		char fpath[4096];
		snprintf(fpath, sizeof fpath, "faulty:%s", t_path(dir, "fail.dat"));
		CHECK(MPI_File_open(MPI_COMM_WORLD, fpath, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info, &ff));
		MPI_Info_free(&info);
		CHECK(MPI_File_iwrite_at_all(ff, region(0), w[0], K, MPI_INT, &req[0]));
		int rc = MPI_Wait(&req[0], &st);
		int cls = MPI_SUCCESS;
		if (rc != MPI_SUCCESS)
			MPI_Error_class(rc, &cls);
		EXPECT(cls == MPI_ERR_IO, "MPI_Wait after a failed write: code %d, class %d", rc, cls);
		CHECK(MPI_File_close(&ff));
	}
	t_done();
	return 0;
}
