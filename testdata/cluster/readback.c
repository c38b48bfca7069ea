/* readback: a rank reads back, with an independent read, the block it has
 * just written with a collective write whose one aggregator (cb_nodes=1,
 * rank 0) may sit on another node. MPI promises a process its own writes;
 * on a file system whose clients cache per node (GlusterFS through FUSE)
 * the bytes are still in the aggregator node's client unless the write
 * sent them on. Prints how many of the ITER reads of every rank returned
 * other bytes; exit status 1 when any did and STRICT=1.
 *
 * With "tiles", each iteration writes a tile of its own (every rank's
 * block, rank after rank) and nothing is read until all are written; then
 * every rank reads its blocks back, the last written first: writes
 * elsewhere in the file do not wait for the earlier writes' syncs
 * (collio_deferred_sync), but a read of their bytes must. Each rank has
 * written and read its blocks itself before, so its node's client holds
 * their old bytes.
 *
 *	mpirun -np 4 readback FILE ITER [tiles] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (argc != 3 && !(argc == 4 && strcmp(argv[3], "tiles") == 0)) {
		if (rank == 0)
			fprintf(stderr, "usage: readback FILE ITER [tiles]\n");
		MPI_Finalize();
		return 2;
	}
	const int block = 1 << 20, iters = atoi(argv[2]);
	char *w = malloc(block), *r = malloc(block);
	MPI_Info info;
	MPI_Info_create(&info);
	MPI_Info_set(info, "cb_nodes", "1");
	MPI_Info_set(info, "romio_cb_write", "enable");
	MPI_File fh;
	if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh) != MPI_SUCCESS) {
		fprintf(stderr, "readback: rank %d: open %s failed\n", rank, argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	long stale[2] = {0, 0}; /* bytes, reads */
	const int tiles = argc == 4;
	if (tiles) {
		memset(w, 'Z', block);
		for (int it = 0; it < iters; it++) {
			MPI_File_write_at(fh, ((MPI_Offset)it * np + rank) * block, w, block, MPI_BYTE, MPI_STATUS_IGNORE);
			MPI_File_read_at(fh, ((MPI_Offset)it * np + rank) * block, r, block, MPI_BYTE, MPI_STATUS_IGNORE);
		}
		MPI_File_sync(fh);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_File_sync(fh);
	}
	for (int it = 0; tiles && it < iters; it++) {
		memset(w, 'a' + (it + rank) % 26, block);
		MPI_File_write_at_all(fh, ((MPI_Offset)it * np + rank) * block, w, block, MPI_BYTE, MPI_STATUS_IGNORE);
	}
	for (int it = iters - 1; tiles && it >= 0; it--) {
		MPI_File_read_at(fh, ((MPI_Offset)it * np + rank) * block, r, block, MPI_BYTE, MPI_STATUS_IGNORE);
		long d = 0;
		for (int i = 0; i < block; i++)
			d += r[i] != 'a' + (it + rank) % 26;
		stale[0] += d;
		stale[1] += d > 0;
	}
	for (int it = 0; !tiles && it < iters; it++) {
		memset(w, 'a' + (it + rank) % 26, block);
		MPI_File_write_at_all(fh, (MPI_Offset)rank * block, w, block, MPI_BYTE, MPI_STATUS_IGNORE);
		MPI_File_read_at(fh, (MPI_Offset)rank * block, r, block, MPI_BYTE, MPI_STATUS_IGNORE);
		long d = 0;
		for (int i = 0; i < block; i++)
			d += r[i] != w[i];
		stale[0] += d;
		stale[1] += d > 0;
	}
	long sum[2];
	MPI_Reduce(stale, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("readback: %d ranks, %d iterations: %ld reads of %d returned other bytes (%ld bytes)\n",
		       np, iters, sum[1], np * iters, sum[0]);
	MPI_File_close(&fh);
	MPI_Info_free(&info);
	MPI_Bcast(sum, 2, MPI_LONG, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	const char *strict = getenv("STRICT");
	return strict && strcmp(strict, "1") == 0 && sum[1] > 0;
}
