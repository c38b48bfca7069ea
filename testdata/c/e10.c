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
 *   e10 OUTDIR planted  (collio only, 3 ranks or more) another user's
 *                       symbolic link at rank 1's cache file name and a
 *                       planted journal at rank 2's, in a shared (1777)
 *                       cache directory, both aimed at a victim file: each
 *                       open with the cache must fail on every rank with
 *                       MPI_ERR_ACCESS and a message naming the planted
 *                       path, the victim and the global file must stay
 *                       untouched, and once both are removed the cache
 *                       works there.
 *
 * Under collio the global file goes through the faulty driver, whose slow
 * writes make the copies outlast an MPI_Finalize that did not wait for
 * them; the host MPI-IO writes the same bytes to the plain path. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The cache's names for global on rank (cache.Names): the global file's
 * base name, the FNV-1a hash of its absolute path and the rank. */
static const char *cache_name(const char *cachedir, const char *global, int rank, const char *ext)
{
	static char buf[2][4300];
	static int next;
	char *p = buf[next++ % 2];
	const char *base = strrchr(global, '/') + 1;
	uint32_t h = 2166136261u;
	for (const char *c = global; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(p, sizeof buf[0], "%s/%s.%08x.r%d.%s", cachedir, base, h, rank, ext);
	return p;
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static unsigned char *put(unsigned char *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		*b++ = (unsigned char)(v >> (8 * i));
	return b;
}

/* plant_journal writes the journal collio's cache writes (cache/journal.go)
 * for global, with a pending write of [0, len) that names cache as its
 * cache file and no device and inode of the global file. */
static void plant_journal(const char *path, const char *global, const char *cache, long len)
{
	static unsigned char b[9000];
	unsigned char *p = b, *rec;
	FILE *f;

	memcpy(p, "COLLIOJ1", 8);
	p = put(p + 8, 1, 4);  /* discard */
	p = put(p, 0, 8);      /* dev */
	p = put(p, 0, 8);      /* ino */
	p = put(p, strlen(global), 4);
	memcpy(p, global, strlen(global));
	p = put(p + strlen(global), strlen(cache), 4);
	memcpy(p, cache, strlen(cache));
	p += strlen(cache);
	p = put(p, crc32_update(0, b, (size_t)(p - b)), 4);
	rec = p;
	memset(rec, 0, 32);
	rec[0] = 'W';
	put(rec + 8, 1, 8);   /* seq */
	put(rec + 16, 0, 8);  /* off */
	put(rec + 24, (uint64_t)len, 8);
	put(rec + 4, crc32_update(crc32_update(0, rec, 1), rec + 8, 24), 4);
	p = rec + 32;
	f = fopen(path, "wb");
	if (f == NULL || fwrite(b, 1, (size_t)(p - b), f) != (size_t)(p - b) || fclose(f) != 0)
		FAIL("writing %s: %s", path, strerror(errno));
}

/* other_user makes path another user's (nobody) when we may. */
static void other_user(const char *path)
{
	if (geteuid() == 0 && lchown(path, 65534, 65534) != 0)
		FAIL("lchown %s: %s", path, strerror(errno));
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static const char victim_data[] = "the user's own data, which no cache may touch";

/* check_untouched: the victim keeps its data and the global file got none. */
static void check_untouched(const char *victim, const char *global, const char *when)
{
	char got[sizeof victim_data + 8] = {0};
	FILE *f = fopen(victim, "rb");
	size_t n;

	if (f == NULL)
		FAIL("%s: the victim %s is gone: %s", when, victim, strerror(errno));
	n = fread(got, 1, sizeof got, f);
	fclose(f);
	EXPECT(n == sizeof victim_data - 1 && memcmp(got, victim_data, n) == 0, "%s: the victim %s now holds %zu bytes: %.*s",
	       when, victim, n, (int)n, got);
	EXPECT(file_size(global) <= 0, "%s: the global file %s holds %ld bytes", when, global, file_size(global));
}

/* open_refused opens global through the cache in cachedir, which must fail
 * with MPI_ERR_ACCESS and collio's message naming planted and why. */
static void open_refused(const char *global, const char *cachedir, const char *planted, const char *why)
{
	MPI_File fh;
	MPI_Info info;
	int rc, cls = -1;
	char msg[4096] = "";
	int (*last_error)(char *, int) = (int (*)(char *, int))dlsym(RTLD_DEFAULT, "collio_last_error");

	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "e10_cache", "enable"));
	CHECK(MPI_Info_set(info, "e10_cache_path", cachedir));
	rc = MPI_File_open(MPI_COMM_WORLD, global, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
	CHECK(MPI_Info_free(&info));
	EXPECT(rc != MPI_SUCCESS, "the open with %s planted succeeded", planted);
	MPI_Error_class(rc, &cls);
	if (last_error != NULL)
		last_error(msg, sizeof msg);
	EXPECT(cls == MPI_ERR_ACCESS, "error class %d, want MPI_ERR_ACCESS (%d): %s", cls, MPI_ERR_ACCESS, msg);
	EXPECT(strstr(msg, "cache: refusing ") != NULL && strstr(msg, planted) != NULL && strstr(msg, why) != NULL,
	       "the message does not name %s and why (%s): %s", planted, why, msg);
}

/* planted runs the attacks of "e10 OUTDIR planted". */
static void planted(const char *dir, const char *cachedir)
{
	const char *global = t_path(dir, "planted.dat"), *victim = t_path(dir, "victim");
	const char *link = cache_name(cachedir, global, 1, "cache"), *journal = cache_name(cachedir, global, 2, "journal");
	MPI_File fh;
	MPI_Info info;
	int v[4];

	if (!collio_loaded())
		FAIL("e10 planted needs collio");
	EXPECT(t_size > 2, "e10 planted needs 3 ranks or more");
	EXPECT(global[0] == '/', "e10 planted needs an absolute OUTDIR, not %s", dir);
	if (t_rank == 0) {
		FILE *f = fopen(victim, "wb");
		if (f == NULL || fputs(victim_data, f) < 0 || fclose(f) != 0)
			FAIL("writing %s: %s", victim, strerror(errno));
		if (mkdir(cachedir, 0777) != 0 || chmod(cachedir, 01777) != 0)
			FAIL("making the shared cache directory %s: %s", cachedir, strerror(errno));
		if (symlink(victim, link) != 0)
			FAIL("symlink %s: %s", link, strerror(errno));
		other_user(link);
		plant_journal(journal, global, victim, (long)strlen(victim_data));
		other_user(journal);
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* Every rank gets the lowest refusing rank's error: rank 1's. */
	open_refused(global, cachedir, link, "the cache file is a symbolic link");
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == 0) {
		check_untouched(victim, global, "after the symbolic link");
		unlink(link);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	open_refused(global, cachedir, journal, geteuid() == 0 ? "the journal is owned by uid 65534" : "the journal records no device and inode");
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == 0) {
		check_untouched(victim, global, "after the planted journal");
		unlink(journal);
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* Nothing planted any more: the same shared directory serves. */
	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "e10_cache", "enable"));
	CHECK(MPI_Info_set(info, "e10_cache_path", cachedir));
	CHECK(MPI_File_open(MPI_COMM_WORLD, global, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
	CHECK(MPI_Info_free(&info));
	for (int i = 0; i < 4; i++)
		v[i] = t_val(t_rank, i);
	CHECK(MPI_File_write_at_all(fh, (MPI_Offset)t_rank * sizeof v, v, 4, MPI_INT, MPI_STATUS_IGNORE));
	CHECK(MPI_File_close(&fh));
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == 0) {
		FILE *f = fopen(global, "rb");
		int got[4];
		for (int r = 0; r < t_size; r++) {
			EXPECT(f != NULL && fread(got, sizeof got, 1, f) == 1, "%s is short", global);
			for (int i = 0; i < 4; i++)
				EXPECT(got[i] == t_val(r, i), "int %d of rank %d in %s is %d", i, r, global, got[i]);
		}
		fclose(f);
		check_untouched(victim, "/nonexistent", "after the good open");
		EXPECT(entries(cachedir) == 0, "%s holds %d files after close", cachedir, entries(cachedir));
	}
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
	if (strcmp(mode, "planted") == 0) {
		snprintf(cachedir, sizeof cachedir, "%s.cache", dir);
		planted(dir, cachedir);
		t_done();
		return 0;
	}
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
