/* pieces: the cost per piece of one collective call with many tiny
 * noncontiguous pieces, as E3SM's history files make them through PnetCDF.
 *
 * The file is a sequence of N pieces of 8 to 64 bytes (lengths from a fixed
 * seed) that tile it without gaps. Pieces go to ranks in runs of a few
 * pieces (mean run length -l, like a decomposition map), so every rank's
 * pieces interleave with the others'. Each rank describes its pieces with
 * one MPI_Type_create_hindexed file type (as PnetCDF does for a flush), sets
 * it as the view, writes all its pieces from a contiguous buffer with one
 * MPI_File_write_all, and reads them back with one MPI_File_read_all; every
 * byte read is checked. The byte at file offset o is a hash of o.
 *
 * Output, one line on rank 0 (phase time = the slowest rank's, the set_view
 * included; ns per piece over all N pieces; view_ns_piece: the first
 * set_view alone, where the file type is flattened):
 *   pieces N=... np=... bytes=... write_s=... read_s=... write_ns_piece=... read_ns_piece=... write_MiBs=... read_MiBs=... view_ns_piece=...
 *
 * Build: mpicc -O2 -Wall -o pieces pieces.c
 * Usage: mpirun -np 4 ./pieces [-n N] [-l RUN] [-f FILE] [-H k=v,k=v] [-k]
 * Exit status: 0 on success, 1 when a byte read differs, 2 for usage errors;
 * an MPI-IO error aborts the job. */
#include <stdint.h>
#include <unistd.h>

#include "common.h"

static void usage(void)
{
	fprintf(stderr,
	        "usage: pieces [-n N] [-l RUN] [-f FILE] [-H key=val,...] [-k]\n"
	        "  -n N      pieces in the file, over all ranks (default 1000000; suffix k, m)\n"
	        "  -l RUN    mean number of consecutive pieces of one rank (default 4)\n"
	        "  -f FILE   file (default ./pieces.dat); removed at the end unless -k\n"
	        "  -H hints  MPI_Info hints for MPI_File_open\n"
	        "  -k        keep the file\n");
}

static inline unsigned char byte_at(uint64_t off)
{
	uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull;
	return (unsigned char)(x >> 56);
}

/* xorshift: the same sequence on every rank. */
static uint64_t rng_state = 88172645463325252ull;
static inline uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	long long n = 1000000;
	int run = 4, keep = 0, opt;
	const char *path = "pieces.dat", *hints = NULL;
	while ((opt = getopt(argc, argv, "n:l:f:H:kh")) != -1) {
		switch (opt) {
		case 'n': n = parse_size(optarg); break;
		case 'l': run = atoi(optarg); break;
		case 'f': path = optarg; break;
		case 'H': hints = optarg; break;
		case 'k': keep = 1; break;
		default:
			if (rank == 0)
				usage();
			MPI_Finalize();
			return 2;
		}
	}
	if (n <= 0 || run <= 0) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}

	/* Count this rank's pieces, then list them. */
	long long mine = 0;
	uint64_t saved = rng_state;
	for (long long i = 0, owner = 0; i < n;) {
		long long len = 1 + (long long)(rng() % (uint64_t)(2 * run - 1));
		for (long long k = 0; k < len && i < n; k++, i++) {
			(void)(8 + rng() % 57);
			if (owner == rank)
				mine++;
		}
		owner = (owner + 1 + (long long)(rng() % 3)) % np;
	}
	rng_state = saved;
	MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (mine > 0 ? mine : 1));
	int *lens = malloc(sizeof(int) * (mine > 0 ? mine : 1));
	long long off = 0, m = 0, bytes = 0;
	for (long long i = 0, owner = 0; i < n;) {
		long long len = 1 + (long long)(rng() % (uint64_t)(2 * run - 1));
		for (long long k = 0; k < len && i < n; k++, i++) {
			int l = 8 + (int)(rng() % 57);
			if (owner == rank) {
				displs[m] = off;
				lens[m] = l;
				bytes += l;
				m++;
			}
			off += l;
		}
		owner = (owner + 1 + (long long)(rng() % 3)) % np;
	}
	unsigned char *buf = malloc(bytes > 0 ? bytes : 1);
	for (long long i = 0, b = 0; i < mine; i++)
		for (int j = 0; j < lens[i]; j++)
			buf[b++] = byte_at(displs[i] + j);

	MPI_Info info;
	if (make_info(hints, &info) != 0) {
		if (rank == 0)
			fprintf(stderr, "pieces: bad -H %s\n", hints);
		MPI_Finalize();
		return 2;
	}
	/* Counts above INT_MAX pieces per rank are not supported by the
	 * hindexed constructor; the sizes here stay far below. */
	MPI_Datatype ftype;
	CHECK(MPI_Type_create_hindexed((int)mine, lens, displs, MPI_BYTE, &ftype), "MPI_Type_create_hindexed");
	CHECK(MPI_Type_commit(&ftype), "MPI_Type_commit");
	MPI_File fh;
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "MPI_File_open");

	double t[2], tv[2];
	for (int phase = 0; phase < 2; phase++) {
		if (phase == 1)
			memset(buf, 0, bytes);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, ftype, "native", info), "MPI_File_set_view");
		double dv = MPI_Wtime() - t0;
		MPI_Reduce(&dv, &tv[phase], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (phase == 0)
			CHECK(MPI_File_write_all(fh, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE), "MPI_File_write_all");
		else
			CHECK(MPI_File_read_all(fh, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE), "MPI_File_read_all");
		double dt = MPI_Wtime() - t0;
		MPI_Reduce(&dt, &t[phase], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	}
	long long bad = 0, allbad = 0;
	for (long long i = 0, b = 0; i < mine; i++)
		for (int j = 0; j < lens[i]; j++, b++)
			if (buf[b] != byte_at(displs[i] + j) && bad++ == 0)
				fprintf(stderr, "pieces: rank %d: byte at file offset %lld is %d, want %d\n", rank,
				        (long long)displs[i] + j, buf[b], byte_at(displs[i] + j));
	MPI_Reduce(&bad, &allbad, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	CHECK(MPI_File_close(&fh), "MPI_File_close");
	if (rank == 0) {
		if (!keep)
			MPI_File_delete(path, MPI_INFO_NULL);
		double mib = (double)off / (1 << 20);
		printf("pieces N=%lld np=%d bytes=%lld write_s=%.6f read_s=%.6f write_ns_piece=%.1f read_ns_piece=%.1f "
		       "write_MiBs=%.1f read_MiBs=%.1f view_ns_piece=%.1f verified=%s\n",
		       n, np, off, t[0], t[1], t[0] / n * 1e9, t[1] / n * 1e9, mib / t[0], mib / t[1],
		       tv[0] / n * 1e9, allbad ? "NO" : "yes");
	}
	MPI_Type_free(&ftype);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	free(buf);
	free(displs);
	free(lens);
	MPI_Finalize();
	return allbad ? 1 : 0;
}
