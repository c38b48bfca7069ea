/* e10: MPI_Finalize waits for the E10 cache's deferred closes.
 *
 *   e10 OUTDIR          writes e10.dat collectively through the cache with
 *                       e10_cache_deferred_close=enable, closes it and calls
 *                       MPI_Finalize at once; rank 0 then checks the file
 *                       and (under collio) that the cache directory
 *                       OUTDIR.cache is empty.
 *   e10 OUTDIR fail     (collio only) rank 1's copies fail: MPI_Finalize
 *                       must return MPI_ERR_IO on every rank, and rank 1's
 *                       cache file and journal stay for collio recover.
 *   e10 OUTDIR nofile   no file I/O at all: MPI_Finalize must succeed.
 *
 * Under collio the global file goes through the faulty driver, whose slow
 * writes make the copies outlast an MPI_Finalize that did not wait for
 * them; the host MPI-IO writes the same bytes to the plain path. */
#include <dirent.h>
#include <errno.h>

#include "t.h"

#define BLOCK 16384  /* ints per block of the interleaved view (64 KiB) */
#define PER (32 * BLOCK) /* ints per rank: 2 MiB */

/* After MPI_Finalize, MPI_Abort is no longer allowed. */
#define POSTFAIL(...)                                                                      \
	do {                                                                               \
		fprintf(stderr, "FAIL %s rank %d %s:%d: ", t_name, t_rank, __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                                              \
		fprintf(stderr, "\n");                                                     \
		exit(1);                                                                   \
	} while (0)

static void expect_hint(MPI_File fh, const char *key, const char *want)
{
	MPI_Info info;
	char val[MPI_MAX_INFO_VAL + 1];
	int flag = 0;
	CHECK(MPI_File_get_info(fh, &info));
	CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag));
	EXPECT(flag && strcmp(val, want) == 0, "hint %s is %s, want %s", key, flag ? val : "unset", want);
	CHECK(MPI_Info_free(&info));
}

/* write_deferred writes PER ints per rank, in blocks interleaved across the
 * ranks, and closes the file without waiting for the cache's copies. The
 * collio_fault rules apply to the ranks listed in fault_ranks (NULL: all). */
static void write_deferred(const char *dir, const char *cachedir, const char *fault, const char *fault_ranks)
{
	static char path[4200];
	MPI_File fh;
	MPI_Info info;
	MPI_Datatype block, ftype;
	MPI_Status st;
	int *buf = malloc(PER * sizeof(int));

	if (buf == NULL)
		FAIL("out of memory");
	for (int i = 0; i < PER; i++)
		buf[i] = t_val(t_rank, i);
	/* The faulty: prefix is collio's; the host MPI-IO gets the plain path. */
	snprintf(path, sizeof path, "%s%s", collio_loaded() ? "faulty:" : "", t_path(dir, "e10.dat"));
	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "e10_cache", "enable"));
	CHECK(MPI_Info_set(info, "e10_cache_path", cachedir));
	CHECK(MPI_Info_set(info, "e10_cache_flush_flag", "flush_onclose"));
	CHECK(MPI_Info_set(info, "e10_cache_deferred_close", "enable"));
	CHECK(MPI_Info_set(info, "collio_fault", fault));
	if (fault_ranks != NULL) {
		CHECK(MPI_Info_set(info, "collio_fault_ranks", fault_ranks));
		/* Every rank writes its own blocks through its cache, so that the
		 * faulty rank has copies to fail whatever the node count (across
		 * nodes the automatic choice makes one aggregator per node). */
		CHECK(MPI_Info_set(info, "romio_cb_write", "disable"));
	}
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
	CHECK(MPI_Info_free(&info));
	if (collio_loaded())
		expect_hint(fh, "e10_cache_deferred_close", "enable");

	CHECK(MPI_Type_contiguous(BLOCK, MPI_INT, &block));
	CHECK(MPI_Type_create_resized(block, 0, (MPI_Aint)t_size * BLOCK * sizeof(int), &ftype));
	CHECK(MPI_Type_commit(&ftype));
	CHECK(MPI_File_set_view(fh, (MPI_Offset)t_rank * BLOCK * sizeof(int), MPI_INT, ftype, "native",
				MPI_INFO_NULL));
	CHECK(MPI_File_write_all(fh, buf, PER, MPI_INT, &st));
	t_status(&st, MPI_INT, PER, MPI_INT, PER, "write_all");
	CHECK(MPI_File_close(&fh));
	CHECK(MPI_Type_free(&block));
	CHECK(MPI_Type_free(&ftype));
	free(buf);
}

/* check_file reads e10.dat with stdio once MPI is finalised. */
static void check_file(const char *dir)
{
	const char *path = t_path(dir, "e10.dat");
	long long n = (long long)PER * t_size;
	int *got = malloc((size_t)n * sizeof(int));
	FILE *f = fopen(path, "rb");
	long long k;

	if (got == NULL || f == NULL)
		POSTFAIL("open %s: %s", path, strerror(errno));
	k = (long long)fread(got, sizeof(int), (size_t)n, f);
	if (k != n)
		POSTFAIL("%s holds %lld ints, want %lld", path, k, n);
	if (fgetc(f) != EOF)
		POSTFAIL("%s is longer than %lld ints", path, n);
	fclose(f);
	for (long long g = 0; g < n; g++) {
		long long b = g / BLOCK;
		int r = (int)(b % t_size), i = (int)((b / t_size) * BLOCK + g % BLOCK);
		if (got[g] != t_val(r, i))
			POSTFAIL("int %lld of %s is %d, want %d (rank %d's copy not finished?)", g, path, got[g],
				 t_val(r, i), r);
	}
	free(got);
}

/* entries counts the files in dir (-1 if it cannot be read). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	const char *dir = t_init(&argc, &argv, "e10");
	const char *mode = argc > 2 ? argv[2] : "";
	static char cachedir[4200];
	int rc, n;

	/* E10_CACHE_DIR: a node-local directory (the cluster tier's). */
	snprintf(cachedir, sizeof cachedir, "%s", getenv("E10_CACHE_DIR") ? getenv("E10_CACHE_DIR") : "");
	if (cachedir[0] == '\0')
		snprintf(cachedir, sizeof cachedir, "%s.cache", dir);
	if (strcmp(mode, "fail") == 0) {
		if (!collio_loaded())
			FAIL("e10 fail needs collio");
		EXPECT(t_size > 1, "e10 fail needs 2 ranks or more");
		write_deferred(dir, cachedir, "eio_call=write:2+", "1");
	} else if (strcmp(mode, "nofile") != 0) {
		write_deferred(dir, cachedir, "slow=write:20ms", NULL);
	}

	rc = MPI_Finalize();

	if (strcmp(mode, "fail") == 0) {
		if (rc != MPI_ERR_IO)
			POSTFAIL("MPI_Finalize returned %d, want MPI_ERR_IO (%d): rank 1's copies failed", rc,
				 MPI_ERR_IO);
		n = entries(cachedir);
		if (t_rank == 1 && n < 2)
			POSTFAIL("%s holds %d files, want rank 1's cache file and journal", cachedir, n);
	} else {
		if (rc != MPI_SUCCESS)
			POSTFAIL("MPI_Finalize returned %d", rc);
		if (t_rank == 0 && strcmp(mode, "nofile") != 0) {
			check_file(dir);
			n = entries(cachedir);
			if (collio_loaded() && n != 0)
				POSTFAIL("%s holds %d files after MPI_Finalize, want none", cachedir, n);
		}
	}
	if (t_rank == 0)
		printf("PASS %s%s%s (%s, %d ranks)\n", t_name, *mode ? " " : "", mode,
		       collio_loaded() ? "collio" : "host MPI-IO", t_size);
	return 0;
}
