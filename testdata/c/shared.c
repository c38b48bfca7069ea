/* shared: the shared file pointer (write_shared/read_shared, their
 * nonblocking forms, seek_shared, get_position_shared) and the ordered
 * collectives (plain and split). Independent shared-pointer writes take
 * turns (rank by rank, with barriers) so that the file is deterministic
 * and can be compared byte for byte. Then MPI_MODE_SEQUENTIAL with views at
 * MPI_DISPLACEMENT_CURRENT. Files: shared.dat, seq.dat. */
#include "t.h"

static MPI_File fh;

static MPI_Offset shpos(void)
{
	MPI_Offset p;
	CHECK(MPI_File_get_position_shared(fh, &p));
	return p;
}

/* expect_pos checks the shared pointer on every rank, then waits for all
 * ranks so that none moves it before the others have looked. */
static void expect_pos(MPI_Offset want, const char *what)
{
	MPI_Offset p = shpos();
	EXPECT(p == want, "%s: shared position %lld, want %lld", what, (long long)p, (long long)want);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Sum over ranks of (base + r), the ints one round moves. */
static int round_total(int base) { return t_size * base + t_size * (t_size - 1) / 2; }

/* expect_disp checks the view's displacement. */
static void expect_disp(MPI_Offset want, const char *what)
{
	MPI_Offset disp;
	MPI_Datatype et, ft;
	char rep[MPI_MAX_DATAREP_STRING];
	CHECK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
	EXPECT(disp == want, "%s: displacement %lld, want %lld", what, (long long)disp, (long long)want);
	if (et != MPI_BYTE && et != MPI_INT)
		MPI_Type_free(&et);
	if (ft != MPI_BYTE && ft != MPI_INT)
		MPI_Type_free(&ft);
}

/* sequential: a header of 1 + rank bytes per rank written in rank order, a
 * view of ints at MPI_DISPLACEMENT_CURRENT (the header's end), 4 ints per
 * rank, a view of bytes at MPI_DISPLACEMENT_CURRENT (the ints' end, now
 * counted in ints of the previous view), a trailer. Rank 0 checks the file. */
static void sequential(const char *dir)
{
	char hdr[64], all[4096];
	int v[4], head = t_size * (t_size + 1) / 2, ints = 4 * t_size;
	MPI_Status st;
	int n;

	for (int i = 0; i < 1 + t_rank; i++)
		hdr[i] = (char)('a' + t_rank);
	for (int i = 0; i < 4; i++)
		v[i] = t_val(t_rank, 500 + i);
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "seq.dat"),
			    MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
	CHECK(MPI_File_write_ordered(fh, hdr, 1 + t_rank, MPI_CHAR, &st));
	CHECK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	expect_disp(head, "MPI_DISPLACEMENT_CURRENT after the header");
	expect_pos(0, "after set_view at MPI_DISPLACEMENT_CURRENT");
	CHECK(MPI_File_write_ordered(fh, v, 4, MPI_INT, &st));
	expect_pos(ints, "after write_ordered of ints");
	/* OMPIO 4.1 takes the pointer times the etype size here, without the
	 * old view's displacement: the host run passes the right value. */
	CHECK(MPI_File_set_view(fh, collio_loaded() ? MPI_DISPLACEMENT_CURRENT : head + 4 * ints, MPI_BYTE, MPI_BYTE,
				"native", MPI_INFO_NULL));
	expect_disp(head + 4 * ints, "MPI_DISPLACEMENT_CURRENT after the ints");
	CHECK(MPI_File_write_ordered(fh, hdr, 1 + t_rank, MPI_CHAR, &st));
	CHECK(MPI_File_close(&fh));
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank != 0)
		return;
	CHECK(MPI_File_open(MPI_COMM_SELF, t_path(dir, "seq.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	CHECK(MPI_File_read_at(fh, 0, all, (int)sizeof all, MPI_BYTE, &st));
	CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
	EXPECT(n == 2 * head + 4 * ints, "seq.dat has %d bytes, want %d", n, 2 * head + 4 * ints);
	for (int r = 0, k = 0; r < t_size; r++) {
		for (int i = 0; i < 1 + r; i++, k++) {
			EXPECT(all[k] == 'a' + r, "header byte %d", k);
			EXPECT(all[head + 4 * ints + k] == 'a' + r, "trailer byte %d", k);
		}
		for (int i = 0; i < 4; i++) {
			int x;
			memcpy(&x, all + head + 4 * (4 * r + i), sizeof x);
			EXPECT(x == t_val(r, 500 + i), "int %d of rank %d", i, r);
		}
	}
	CHECK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
	const char *dir = t_init(&argc, &argv, "shared");
	int buf[64], got[64];
	MPI_Status st;
	MPI_Request req;
	MPI_Offset pos;
	int total = 0;

	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "shared.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			    &fh));
	CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	expect_pos(0, "after open");

	/* Round 1: write_shared, rank by rank: 10 + rank ints each. */
	for (int i = 0; i < 64; i++)
		buf[i] = t_val(t_rank, 100 + i);
	for (int turn = 0; turn < t_size; turn++) {
		if (turn == t_rank) {
			CHECK(MPI_File_write_shared(fh, buf, 10 + t_rank, MPI_INT, &st));
			t_status(&st, MPI_INT, 10 + t_rank, MPI_INT, 10 + t_rank, "write_shared");
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	total += round_total(10);
	expect_pos(total, "after a round");

	/* Round 2: write_ordered, 5 + rank ints each, in rank order. */
	for (int i = 0; i < 64; i++)
		buf[i] = t_val(t_rank, 200 + i);
	CHECK(MPI_File_write_ordered(fh, buf, 5 + t_rank, MPI_INT, &st));
	t_status(&st, MPI_INT, 5 + t_rank, MPI_INT, 5 + t_rank, "write_ordered");
	total += round_total(5);
	expect_pos(total, "after a round");

	/* Round 3: split ordered write, 3 ints each. */
	for (int i = 0; i < 64; i++)
		buf[i] = t_val(t_rank, 300 + i);
	CHECK(MPI_File_write_ordered_begin(fh, buf, 3, MPI_INT));
	CHECK(MPI_File_write_ordered_end(fh, buf, &st));
	t_status(&st, MPI_INT, 3, MPI_INT, 3, "write_ordered_end");
	total += 3 * t_size;

	/* Round 4: iwrite_shared, rank by rank, 2 ints each. */
	for (int i = 0; i < 64; i++)
		buf[i] = t_val(t_rank, 400 + i);
	for (int turn = 0; turn < t_size; turn++) {
		if (turn == t_rank) {
			CHECK(MPI_File_iwrite_shared(fh, buf, 2, MPI_INT, &req));
			CHECK(MPI_Wait(&req, &st));
			t_status(&st, MPI_INT, 2, MPI_INT, 2, "iwrite_shared");
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	total += 2 * t_size;
	expect_pos(total, "after a round");
	CHECK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(MPI_File_sync(fh));

	/* Read it back the same way. */
	CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
	expect_pos(0, "after seek_shared");
	for (int turn = 0; turn < t_size; turn++) {
		if (turn == t_rank) {
			CHECK(MPI_File_read_shared(fh, got, 10 + t_rank, MPI_INT, &st));
			t_status(&st, MPI_INT, 10 + t_rank, MPI_INT, 10 + t_rank, "read_shared");
			for (int i = 0; i < 10 + t_rank; i++)
				EXPECT(got[i] == t_val(t_rank, 100 + i), "read_shared element %d", i);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	CHECK(MPI_File_read_ordered(fh, got, 5 + t_rank, MPI_INT, &st));
	t_status(&st, MPI_INT, 5 + t_rank, MPI_INT, 5 + t_rank, "read_ordered");
	for (int i = 0; i < 5 + t_rank; i++)
		EXPECT(got[i] == t_val(t_rank, 200 + i), "read_ordered element %d", i);
	CHECK(MPI_File_read_ordered_begin(fh, got, 3, MPI_INT));
	CHECK(MPI_File_read_ordered_end(fh, got, &st));
	t_status(&st, MPI_INT, 3, MPI_INT, 3, "read_ordered_end");
	for (int i = 0; i < 3; i++)
		EXPECT(got[i] == t_val(t_rank, 300 + i), "read_ordered_end element %d", i);
	for (int turn = 0; turn < t_size; turn++) {
		if (turn == t_rank) {
			CHECK(MPI_File_iread_shared(fh, got, 2, MPI_INT, &req));
			CHECK(MPI_Wait(&req, &st));
			t_status(&st, MPI_INT, 2, MPI_INT, 2, "iread_shared");
			for (int i = 0; i < 2; i++)
				EXPECT(got[i] == t_val(t_rank, 400 + i), "iread_shared element %d", i);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}

	CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
	expect_pos(total, "after seek_shared to the end");
	CHECK(MPI_File_seek_shared(fh, -3, MPI_SEEK_CUR));
	expect_pos(total - 3, "after seek_shared back");
	/* The individual pointer is separate. */
	CHECK(MPI_File_get_position(fh, &pos));
	EXPECT(pos == 0, "individual position %lld", (long long)pos);
	/* set_view resets the shared pointer. */
	CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	expect_pos(0, "after set_view");
	/* Leave the pointer away from 0: the next open must not see it. */
	CHECK(MPI_File_seek_shared(fh, 7, MPI_SEEK_SET));
	expect_pos(7, "after seek_shared before close");
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(MPI_File_close(&fh));

	/* Opens after a close (collio reuses the communicator and window
	 * it kept): each starts at 0, or at the end with MPI_MODE_APPEND. */
	for (int again = 0; again < 3; again++) {
		CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "shared.dat"), MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
		expect_pos(0, "after reopening");
		CHECK(MPI_File_seek_shared(fh, 3 + again, MPI_SEEK_SET));
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_File_close(&fh));
	}
	MPI_Offset size = (MPI_Offset)total * (MPI_Offset)sizeof(int);
	if (collio_loaded()) { /* OMPIO leaves the shared pointer at 0 */
		CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "shared.dat"), MPI_MODE_RDWR | MPI_MODE_APPEND,
				    MPI_INFO_NULL, &fh));
		expect_pos(size, "after opening with MPI_MODE_APPEND");
		CHECK(MPI_File_close(&fh));
	}

	/* Two files open at once on one communicator, and one on a
	 * communicator the program frees while collio keeps state for it. */
	MPI_File fh2;
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	for (int again = 0; again < 2; again++) {
		CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "shared.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
		CHECK(MPI_File_open(dup, t_path(dir, "shared.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh2));
		CHECK(MPI_File_seek_shared(fh, 4, MPI_SEEK_SET));
		MPI_Offset p2;
		CHECK(MPI_File_get_position_shared(fh2, &p2));
		EXPECT(p2 == 0, "second file's shared position %lld, want 0", (long long)p2);
		MPI_Barrier(MPI_COMM_WORLD);
		expect_pos(4, "first file after moving it");
		CHECK(MPI_File_close(&fh2));
		CHECK(MPI_File_close(&fh));
	}
	MPI_Comm_free(&dup);
	MPI_Barrier(MPI_COMM_WORLD);
	sequential(dir);
	t_done();
	return 0;
}
