/* overflow: offsets whose byte positions do not fit in an MPI_Offset.
 *
 *   overflow OUTDIR
 *
 * With 8-byte etypes, etype offset 2^61+1 is byte 2^64+8. The host MPI-IO
 * (OMPIO and ROMIO alike) multiplies unchecked, writes at byte 8 and
 * returns MPI_SUCCESS, so this program runs under collio only (run.sh),
 * where every such call must fail with MPI_ERR_ARG, collio's message naming
 * the offset, and write nothing:
 *   - collective calls where only the last rank passes the offset
 *     (write_at_all, read_at_all, iwrite_at_all, write_at_all_begin/_end,
 *     write_all from a file pointer at the last etype): every rank fails;
 *   - independent calls, seeks, get_byte_offset: that rank fails;
 *   - the shared file pointer: seek_shared past the end (every rank), shared
 *     writes from the last etype (each rank), ordered writes whose second
 *     rank's data ends at 2^63 (every rank);
 *   - with collective buffering disabled and after a call served in C by the
 *     fast lane (lane.c), which checks too: the rank with the offset fails
 *     at once, every rank at close, and nothing lands at byte 8. */
#include <stdarg.h>
#include <stdint.h>

#include "t.h"

#define WRAP ((MPI_Offset)1 << 61 | 1)
#define LAST ((MPI_Offset)(INT64_MAX / 8)) /* byte 2^63-8: one etype there ends at 2^63 */

static int class_of(int rc)
{
	int c = -1;
	MPI_Error_class(rc, &c);
	return c;
}

/* expect_arg checks that rc is of class MPI_ERR_ARG and that its text holds
 * each string after what, up to a NULL. */
static void expect_arg(int rc, const char *what, ...)
{
	char s[MPI_MAX_ERROR_STRING];
	const char *w;
	int n = 0;
	va_list ap;
	EXPECT(rc != MPI_SUCCESS, "%s returned MPI_SUCCESS", what);
	s[0] = '\0';
	MPI_Error_string(rc, s, &n);
	EXPECT(class_of(rc) == MPI_ERR_ARG, "%s: class %d, want MPI_ERR_ARG (%s)", what, class_of(rc), s);
	va_start(ap, what);
	while ((w = va_arg(ap, const char *)) != NULL)
		EXPECT(strstr(s, w) != NULL, "%s: MPI_Error_string is \"%s\"; want it to contain \"%s\"", what, s, w);
	va_end(ap);
}

static long long file_size(const char *path)
{
	FILE *fp = fopen(path, "rb");
	long long n;
	EXPECT(fp != NULL, "cannot open %s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fclose(fp);
	return n;
}

int main(int argc, char **argv)
{
	const char *dir = t_init(&argc, &argv, "overflow");
	char *path = t_path(dir, "overflow.dat"), *lane = t_path(dir, "lane.dat");
	char bad_rank[32], wrapped[64], last[64], last_plus[64];
	double v[2] = {1, 2};
	int bad, rc;
	MPI_Offset off, disp = -1;
	MPI_File fh;
	MPI_Info info;
	MPI_Request req;

	bad = t_size - 1;
	snprintf(bad_rank, sizeof bad_rank, "(rank %d)", bad);
	snprintf(wrapped, sizeof wrapped, "offset %lld", (long long)WRAP);
	snprintf(last, sizeof last, "offset %lld", (long long)LAST);
	snprintf(last_plus, sizeof last_plus, "offset %lld", (long long)LAST + 1);
	off = t_rank == bad ? WRAP : t_rank;
	if (!collio_loaded())
		FAIL("collio only: the host MPI-IO writes these calls at wrapped offsets");

	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	CHECK(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL));

	rc = MPI_File_write_at_all(fh, off, v, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
	expect_arg(rc, "write_at_all with one rank at 2^61+1", "collio: write_at_all ", bad_rank, wrapped, NULL);
	rc = MPI_File_read_at_all(fh, off, v, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
	expect_arg(rc, "read_at_all with one rank at 2^61+1", "collio: read_at_all ", bad_rank, wrapped, NULL);
	CHECK(MPI_File_iwrite_at_all(fh, off, v, 1, MPI_DOUBLE, &req));
	rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	EXPECT(class_of(rc) == MPI_ERR_ARG, "iwrite_at_all with one rank at 2^61+1: MPI_Wait's class %d", class_of(rc));
	CHECK(MPI_File_write_at_all_begin(fh, off, v, 1, MPI_DOUBLE));
	rc = MPI_File_write_at_all_end(fh, v, MPI_STATUS_IGNORE);
	expect_arg(rc, "write_at_all_begin/_end with one rank at 2^61+1", bad_rank, wrapped, NULL);
	if (t_rank == bad)
		CHECK(MPI_File_seek(fh, LAST, MPI_SEEK_SET));
	rc = MPI_File_write_all(fh, v, 2, MPI_DOUBLE, MPI_STATUS_IGNORE);
	expect_arg(rc, "write_all from the last etype on one rank", "collio: write_all ", bad_rank, last, NULL);

	rc = MPI_File_write_at(fh, WRAP, v, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
	expect_arg(rc, "write_at at 2^61+1", "collio: write_at ", wrapped, NULL);
	rc = MPI_File_read_at(fh, WRAP, v, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
	expect_arg(rc, "read_at at 2^61+1", "collio: read_at ", wrapped, NULL);
	rc = MPI_File_write_at(fh, LAST, v, 2, MPI_DOUBLE, MPI_STATUS_IGNORE);
	expect_arg(rc, "write_at of 16 bytes at the last etype", "collio: write_at ", last, NULL);
	rc = MPI_File_seek(fh, WRAP, MPI_SEEK_SET);
	expect_arg(rc, "seek to 2^61+1", "collio: seek ", wrapped, NULL);
	rc = MPI_File_seek(fh, LAST + 1, MPI_SEEK_END);
	expect_arg(rc, "seek past the end", "collio: seek ", last_plus, NULL);
	rc = MPI_File_get_byte_offset(fh, WRAP, &disp);
	expect_arg(rc, "get_byte_offset of 2^61+1", "collio: get_byte_offset ", wrapped, NULL);

	rc = MPI_File_seek_shared(fh, WRAP, MPI_SEEK_SET);
	expect_arg(rc, "seek_shared to 2^61+1", "collio: seek_shared ", wrapped, NULL);
	CHECK(MPI_File_seek_shared(fh, LAST, MPI_SEEK_SET));
	rc = MPI_File_write_shared(fh, v, 2, MPI_DOUBLE, MPI_STATUS_IGNORE);
	expect_arg(rc, "write_shared from the last etype", "collio: write_shared ", "offset ", NULL);
	MPI_Barrier(MPI_COMM_WORLD); /* every shared write is done before the pointer moves */
	if (t_size > 1) {
		char rank1[32];
		snprintf(rank1, sizeof rank1, "(rank 1)");
		CHECK(MPI_File_seek_shared(fh, LAST - 1, MPI_SEEK_SET));
		rc = MPI_File_write_ordered(fh, v, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
		expect_arg(rc, "write_ordered from the etype before the last", "collio: write_ordered ", rank1, last, NULL);
	}
	CHECK(MPI_File_close(&fh));

	/* Collective buffering disabled: no communication in the call. The
	 * first call arms the fast lane, which hands the second to Go. */
	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "romio_cb_write", "disable"));
	CHECK(MPI_File_open(MPI_COMM_WORLD, lane, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
	CHECK(MPI_Info_free(&info));
	CHECK(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL));
	CHECK(MPI_File_write_at_all(fh, 10 + t_rank, v, 1, MPI_DOUBLE, MPI_STATUS_IGNORE));
	rc = MPI_File_write_at_all(fh, t_rank == bad ? WRAP : 20 + t_rank, v, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
	if (t_rank == bad)
		expect_arg(rc, "write_at_all at 2^61+1 after a fast-lane call", "collio: write_at_all ", bad_rank, wrapped,
			   NULL);
	else
		CHECK(rc);
	rc = MPI_File_close(&fh);
	/* (The message quotes the write's, past what MPI_Error_string keeps.) */
	expect_arg(rc, "close after a failed write_at_all without communication", "collio: close ",
		   "an earlier collective call failed", NULL);

	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == 0) {
		FILE *fp = fopen(lane, "rb");
		double head[10];
		size_t i;
		EXPECT(file_size(path) == 0, "%s holds %lld bytes; nothing may be written", path, file_size(path));
		EXPECT(fp != NULL && fread(head, sizeof head[0], 10, fp) == 10, "cannot read %s", lane);
		fclose(fp);
		for (i = 0; i < 10; i++)
			EXPECT(head[i] == 0, "%s: etype %zu holds %g; nothing may be written before etype 10", lane, i,
			       head[i]);
	}
	t_done();
	return 0;
}
