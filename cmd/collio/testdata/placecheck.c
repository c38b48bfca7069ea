/* placecheck: run under mpirun with a rankfile; checks from inside the job
 * that every rank runs where the rankfile puts it.
 *   placecheck RANKFILE
 * Each rank reports its MPI processor name, its virtual host (COLLIO_VHOST,
 * set by scripts/vhosts-rsh.sh), the lowest rank of its shared-memory
 * communicator (MPI_Comm_split_type) and the CPUs it is bound to. Rank 0
 * checks that the shared-memory groups are the rankfile's hosts, that each
 * rank's host is its rankfile host, and that each rank is bound to its
 * slot; it prints one line per problem and exits 1 if there is any. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME 64

struct report {
	char name[NAME], vhost[NAME];
	int lead;
	int cpus;  /* CPUs in the affinity mask */
	int first; /* lowest CPU in it */
};

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	struct report me;
	memset(&me, 0, sizeof me);
	int len;
	char pname[MPI_MAX_PROCESSOR_NAME];
	MPI_Get_processor_name(pname, &len);
	snprintf(me.name, NAME, "%s", pname);
	const char *vh = getenv("COLLIO_VHOST");
	snprintf(me.vhost, NAME, "%s", vh ? vh : "");
	MPI_Comm node;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Allreduce(&rank, &me.lead, 1, MPI_INT, MPI_MIN, node);
	cpu_set_t set;
	me.first = -1;
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		me.cpus = CPU_COUNT(&set);
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				me.first = c;
				break;
			}
	}
	struct report *all = rank == 0 ? calloc(size, sizeof *all) : NULL;
	MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
	int bad = 0;
	if (rank == 0) {
		char (*host)[NAME] = calloc(size, NAME);
		int *slot = calloc(size, sizeof *slot), *seen = calloc(size, sizeof *seen);
		FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
		if (!f) {
			printf("placecheck: cannot read the rankfile %s\n", argc > 1 ? argv[1] : "(none given)");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		int r, s;
		char h[NAME];
		while (fscanf(f, " rank %d=%63[^ ] slot=%d", &r, h, &s) == 3) {
			if (r < 0 || r >= size) {
				printf("placecheck: rankfile names rank %d of %d\n", r, size);
				bad++;
				continue;
			}
			snprintf(host[r], NAME, "%s", h);
			slot[r] = s;
			seen[r] = 1;
		}
		fclose(f);
		int hosts = 0;
		for (r = 0; r < size; r++) {
			if (!seen[r]) {
				printf("placecheck: rank %d is not in the rankfile\n", r);
				bad++;
				continue;
			}
			int lead = r; /* the lowest rank the rankfile puts on r's host */
			for (int q = 0; q < r; q++)
				if (seen[q] && strcmp(host[q], host[r]) == 0) {
					lead = q;
					break;
				}
			hosts += lead == r;
			if (all[r].lead != lead) {
				printf("placecheck: rank %d shares memory with rank %d, the rankfile puts it with rank %d\n", r,
				       all[r].lead, lead);
				bad++;
			}
			if (strcmp(all[r].vhost, host[r]) != 0) {
				printf("placecheck: rank %d runs on host %s, the rankfile says %s\n", r, all[r].vhost, host[r]);
				bad++;
			}
			if (all[r].cpus != 1 || all[r].first != slot[r]) {
				printf("placecheck: rank %d is bound to %d CPUs from %d, the rankfile says slot %d\n", r,
				       all[r].cpus, all[r].first, slot[r]);
				bad++;
			}
		}
		if (bad == 0)
			printf("placecheck: %d ranks on %d hosts, each on its rankfile host and slot (processor name of rank %d: %s)\n",
			       size, hosts, size - 1, all[size - 1].name);
	}
	MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return bad ? 1 : 0;
}
