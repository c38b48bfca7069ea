/* seekend: every rank writes rank+1 integers with MPI_File_write_ordered
 * (its ranges do not interleave, so collio writes them independently, each
 * rank through its own node's client), then MPI_File_seek_shared moves the
 * shared pointer to the end of file, which must count every rank's write.
 * On GlusterFS the last rank's bytes may still sit in its node's
 * write-behind when rank 0 asks the file's size: collio without a sync
 * there ended short once in about 300 files. A new file per iteration;
 * prints how many seeks ended short; exit status 1 when any did.
 *
 *	mpirun -np 4 seekend DIR ITER */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (argc != 3 || np > 64) {
		if (rank == 0)
			fprintf(stderr, "usage: seekend DIR ITER (at most 64 ranks)\n");
		MPI_Finalize();
		return 2;
	}
	int iters = atoi(argv[2]), shorts = 0, buf[64];
	for (int k = 0; k < 64; k++)
		buf[k] = rank;
	for (int it = 0; it < iters; it++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/seekend.%d.dat", argv[1], it);
		MPI_File fh;
		if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS ||
		    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL) != MPI_SUCCESS ||
		    MPI_File_write_ordered(fh, buf, rank + 1, MPI_INT, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			fprintf(stderr, "seekend: rank %d: open, set_view or write_ordered failed on %s\n", rank, path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Offset end;
		if (MPI_File_seek_shared(fh, 0, MPI_SEEK_END) != MPI_SUCCESS ||
		    MPI_File_get_position_shared(fh, &end) != MPI_SUCCESS || MPI_File_close(&fh) != MPI_SUCCESS) {
			fprintf(stderr, "seekend: rank %d: seek_shared, get_position_shared or close failed on %s\n", rank, path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		shorts += end != np * (np + 1) / 2;
	}
	int all = 0;
	MPI_Reduce(&shorts, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("seekend: %d ranks, %d files: %d seeks to the end ended short\n", np, iters, all);
	MPI_Bcast(&all, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return all != 0;
}
