/* stats: a file with a few collective writes of different patterns, one of
 * them with romio_cb_write=disable, an independent write and a collective
 * read, for the per-file report at close (COLLIO_STATS; run.sh checks the
 * report). File: stats.dat.
 *
 * Per rank: write_at_all of 64 Ki ints, contiguous at rank * 256 KiB (no
 * interleaving); then a view of blocks of B ints, rank r's at r*B, r*B +
 * P*B, ...: write_at_all and write_all of 16 Ki ints each, write_at_all of
 * 8 Ki ints with romio_cb_write=disable, and again with
 * romio_cb_write=enable; write_at of 16 ints; read_at_all of the 56 Ki
 * ints of the view, checked. Collective writes: 5 calls, 448 KiB per
 * rank; collective reads: 1 call. Linked with libcollio (T_LINKED), the
 * program also checks the figures of collio_file_stats and
 * collio_file_stats_all before the close. */
#include "t.h"
#ifdef T_LINKED
#include <collio.h>
#endif

#define BIG (64 * 1024) /* ints of the contiguous write */
#define B 16            /* ints per block of the interleaved view */
#define N (16 * 1024)   /* ints per interleaved write */
#define H (8 * 1024)    /* ints per write with romio_cb_write set */

#ifdef T_LINKED
static void expect_kind(const collio_call_stats *k, long long calls, long long bytes, long long pieces, const char *what)
{
	EXPECT(k->calls == calls && k->failed == 0 && k->bytes == bytes && k->pieces == pieces,
	       "%s: %lld calls, %lld failed, %lld bytes, %lld pieces; want %lld calls, %lld bytes, %lld pieces", what,
	       k->calls, k->failed, k->bytes, k->pieces, calls, bytes, pieces);
	EXPECT(calls == 0 || k->total_ns > 0, "%s: total_ns %lld", what, k->total_ns);
}

/* check_stats: this rank's figures, then the figures over the ranks
 * (collective), as the report at close counts them (run.sh). */
static void check_stats(MPI_File fh)
{
	collio_stats me, sum, lo, hi;
	const long long w = (BIG + 2 * N + 2 * H) * 4, r = (2 * N + 2 * H) * 4;

	EXPECT(collio_file_stats(MPI_FILE_NULL, &me) == MPI_ERR_FILE, "collio_file_stats of MPI_FILE_NULL");
	EXPECT(collio_file_stats(fh, NULL) == MPI_ERR_ARG, "collio_file_stats with st NULL");
	CHECK(collio_file_stats(fh, &me));
	EXPECT(me.ranks == 1 && me.open_ns > 0, "ranks %d, open_ns %lld", me.ranks, me.open_ns);
	expect_kind(&me.collective_write, 5, w, 3073, "collective writes");
	expect_kind(&me.collective_read, 1, r, 2 * N / B + 2 * H / B, "collective reads");
	expect_kind(&me.independent_write, 1, 64, 1, "independent writes");
	expect_kind(&me.independent_read, 0, 0, 0, "independent reads");
	EXPECT(me.strategy[0] != '\0' && me.reason[0] != '\0', "the last call's strategy \"%s\" and reason \"%s\"",
	       me.strategy, me.reason);

	CHECK(collio_file_stats_all(fh, &sum, &lo, &hi));
	EXPECT(sum.ranks == t_size && lo.ranks == t_size, "ranks %d", sum.ranks);
	expect_kind(&sum.collective_write, 5LL * t_size, w * t_size, 3073LL * t_size, "sum of collective writes");
	expect_kind(&lo.collective_write, 5, w, 3073, "min of collective writes");
	expect_kind(&hi.collective_write, 5, w, 3073, "max of collective writes");
	expect_kind(&sum.independent_write, t_size, 64LL * t_size, t_size, "sum of independent writes");
	EXPECT(lo.collective_write.total_ns <= hi.collective_write.total_ns &&
		       hi.collective_write.total_ns <= sum.collective_write.total_ns,
	       "collective write time: min %lld, max %lld, sum %lld", lo.collective_write.total_ns,
	       hi.collective_write.total_ns, sum.collective_write.total_ns);
	EXPECT(lo.open_ns > 0 && lo.open_ns <= hi.open_ns, "open_ns: min %lld, max %lld", lo.open_ns, hi.open_ns);
	EXPECT(strcmp(sum.strategy, me.strategy) == 0, "strategy \"%s\", this rank's \"%s\"", sum.strategy, me.strategy);
	CHECK(collio_file_stats_all(fh, NULL, NULL, NULL));
}
#endif

int main(int argc, char **argv)
{
	const char *dir = t_init(&argc, &argv, "stats");
	MPI_File fh;
	MPI_Datatype block, ftype;
	MPI_Info info;
	MPI_Status st;
	int *buf = malloc(sizeof(int) * BIG), *got = malloc(sizeof(int) * (2 * N + 2 * H));
	MPI_Offset base = (MPI_Offset)t_size * BIG * sizeof(int);

	if (buf == NULL || got == NULL)
		FAIL("out of memory");
	for (int i = 0; i < BIG; i++)
		buf[i] = t_val(t_rank, i);
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "stats.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			    &fh));
	/* 1: contiguous per rank. */
	CHECK(MPI_File_write_at_all(fh, (MPI_Offset)t_rank * BIG * sizeof(int), buf, BIG, MPI_INT, &st));

	/* 2, 3: interleaved blocks after the contiguous part. */
	CHECK(MPI_Type_contiguous(B, MPI_INT, &block));
	CHECK(MPI_Type_create_resized(block, 0, (MPI_Aint)t_size * B * sizeof(int), &ftype));
	CHECK(MPI_Type_commit(&ftype));
	CHECK(MPI_File_set_view(fh, base + (MPI_Offset)t_rank * B * sizeof(int), MPI_INT, ftype, "native",
				MPI_INFO_NULL));
	CHECK(MPI_File_write_at_all(fh, 0, buf, N, MPI_INT, &st));
	CHECK(MPI_File_seek(fh, N, MPI_SEEK_SET));
	CHECK(MPI_File_write_all(fh, buf + N, N, MPI_INT, &st));

	/* 4: collective buffering disabled; 5: enabled. */
	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "romio_cb_write", "disable"));
	CHECK(MPI_File_set_info(fh, info));
	CHECK(MPI_File_write_at_all(fh, 2 * N, buf + 2 * N, H, MPI_INT, &st));
	CHECK(MPI_Info_set(info, "romio_cb_write", "enable"));
	CHECK(MPI_File_set_info(fh, info));
	CHECK(MPI_File_write_at_all(fh, 2 * N + H, buf + 2 * N + H, H, MPI_INT, &st));
	CHECK(MPI_Info_free(&info));

	/* An independent write over the first 16 ints of call 5's data. */
	CHECK(MPI_File_write_at(fh, 2 * N + H, buf + 2 * N + H, 16, MPI_INT, &st));

	CHECK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(MPI_File_sync(fh));
	CHECK(MPI_File_read_at_all(fh, 0, got, 2 * N + 2 * H, MPI_INT, &st));
	for (int i = 0; i < 2 * N + 2 * H; i++)
		EXPECT(got[i] == buf[i], "element %d: %d, want %d", i, got[i], buf[i]);
#ifdef T_LINKED
	check_stats(fh);
#endif
	CHECK(MPI_File_close(&fh));
	CHECK(MPI_Type_free(&ftype));
	CHECK(MPI_Type_free(&block));
	free(buf);
	free(got);
	t_done();
	return 0;
}
