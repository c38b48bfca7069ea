/* ioserver: dedicated I/O server ranks through collio.h. One rank serves;
 * the compute ranks write through collio_open and MPI_File_open on the
 * compute communicator, read queued data back, and get a server's write
 * error (faulty driver) from sync and close on every rank; a second split
 * (count from the collio_io_servers hint) is stopped by MPI_Finalize.
 * Needs libcollio linked and at least 2 ranks. */
#include "t.h"
#include "collio.h"

#define N 4096

static void check_file(const char *path, int ranks, int salt)
{
	unsigned char got[N];
	FILE *fp = fopen(path, "rb");
	EXPECT(fp != NULL, "cannot open %s", path);
	for (int r = 0; r < ranks; r++) {
		EXPECT(fread(got, 1, N, fp) == N, "%s is short", path);
		for (int i = 0; i < N; i++)
			EXPECT(got[i] == (unsigned char)(r * 7 + i + salt), "%s: byte %d of rank %d", path, i, r);
	}
	EXPECT(fgetc(fp) == EOF, "%s is too long", path);
	fclose(fp);
}

static void compute_ranks(const char *dir, MPI_Comm compute);
static void second_split(const char *dir);

int main(int argc, char **argv)
{
	const char *dir = t_init(&argc, &argv, "ioserver");
	MPI_Comm compute;

	CHECK(collio_split_io_servers(MPI_COMM_WORLD, 1, MPI_INFO_NULL, &compute));
	if (compute != MPI_COMM_NULL) /* else the server, stopped */
		compute_ranks(dir, compute);
	second_split(dir);
	return 0;
}

/* compute_ranks runs the cases on the compute ranks and stops the server. */
static void compute_ranks(const char *dir, MPI_Comm compute)
{
	collio_file f;
	MPI_File mf;
	MPI_Info info;
	MPI_Offset n;
	unsigned char buf[N], got[N];
	int crank, csize, rc, cls;
	char path[4200];

	MPI_Comm_rank(compute, &crank);
	MPI_Comm_size(compute, &csize);
	EXPECT(csize == t_size - 1, "compute communicator of %d ranks", csize);

	for (int i = 0; i < N; i++)
		buf[i] = (unsigned char)(crank * 7 + i + 1);
	CHECK(collio_open(compute, t_path(dir, "srv.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &f));
	CHECK(collio_write_at_all(f, (MPI_Offset)crank * N, buf, N, MPI_BYTE, &n));
	EXPECT(n == N, "wrote %lld bytes", (long long)n);
	CHECK(collio_read_at(f, (MPI_Offset)crank * N, got, N, MPI_BYTE, &n));
	EXPECT(n == N && memcmp(buf, got, N) == 0, "reading back queued data");
	CHECK(collio_close(&f));
	MPI_Barrier(compute);
	if (crank == 0)
		check_file(t_path(dir, "srv.dat"), csize, 1);

	/* The drop-in API on the compute communicator goes the same way. */
	for (int i = 0; i < N; i++)
		buf[i] = (unsigned char)(crank * 7 + i + 2);
	CHECK(MPI_File_open(compute, t_path(dir, "mpi.dat"), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &mf));
	CHECK(MPI_File_write_at_all(mf, (MPI_Offset)crank * N, buf, N, MPI_BYTE, MPI_STATUS_IGNORE));
	CHECK(MPI_File_close(&mf));
	MPI_Barrier(compute);
	if (crank == 0)
		check_file(t_path(dir, "mpi.dat"), csize, 2);

	/* A write error at the server reaches every compute rank. */
	MPI_Info_create(&info);
	MPI_Info_set(info, "collio_fault", "eio_offset=10");
	snprintf(path, sizeof path, "faulty:%s", t_path(dir, "eio.dat"));
	CHECK(collio_open(compute, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &f));
	MPI_Info_free(&info);
	CHECK(collio_write_at(f, (MPI_Offset)crank * N, buf, N, MPI_BYTE, &n));
	rc = collio_sync(f);
	MPI_Error_class(rc, &cls);
	EXPECT(cls == MPI_ERR_IO, "sync returned %d (class %d), want MPI_ERR_IO", rc, cls);
	rc = collio_close(&f);
	MPI_Error_class(rc, &cls);
	EXPECT(cls == MPI_ERR_IO, "close returned %d (class %d), want MPI_ERR_IO", rc, cls);

	CHECK(collio_stop_io_servers(compute));
	MPI_Comm_free(&compute);
}

/* second_split splits again, the count from collio_io_servers; this time
 * MPI_Finalize stops the server. */
static void second_split(const char *dir)
{
	MPI_Comm compute;
	MPI_Info info;
	collio_file f;
	MPI_Offset n;
	unsigned char buf[N] = {1};
	int crank;

	MPI_Info_create(&info);
	MPI_Info_set(info, "collio_io_servers", "1");
	CHECK(collio_split_io_servers(MPI_COMM_WORLD, 0, info, &compute));
	MPI_Info_free(&info);
	if (compute != MPI_COMM_NULL) {
		MPI_Comm_rank(compute, &crank);
		CHECK(collio_open(compute, t_path(dir, "fin.dat"), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &f));
		CHECK(collio_write_at_all(f, (MPI_Offset)crank * N, buf, N, MPI_BYTE, &n));
		CHECK(collio_close(&f));
		if (crank == 0)
			printf("PASS %s (collio, %d ranks)\n", t_name, t_size);
	}
	/* No barrier on MPI_COMM_WORLD (t_done): the server returns only once
	 * the compute ranks finalise. */
	CHECK(MPI_Finalize());
}
