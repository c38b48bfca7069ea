#!/bin/sh
# An ssh stand-in for Open MPI that starts every "remote" daemon on this
# machine, so that a rankfile or hostfile naming several hosts runs on one
# machine with each host a separate daemon: MPI_Comm_split_type(SHARED)
# and (where unshare --uts is allowed) MPI_Get_processor_name then report
# the virtual hosts. Use:
#   mpirun --mca plm_rsh_agent scripts/vhosts-rsh.sh --hostfile H -rf R ...
# with made-up host names in H and R. Each daemon gets its own TMPDIR
# (under the caller's) so that their shared-memory session files do not
# collide; COLLIO_VHOST names the host in every rank's environment.
while [ $# -gt 0 ]; do
	case "$1" in
	-x | -n | -T | -t | -q) shift ;;
	-o | -l | -p) shift 2 ;;
	*) break ;;
	esac
done
host=$1
shift
export COLLIO_VHOST="$host"
TMPDIR="${TMPDIR:-/tmp}/vhost.$host.$$"
export TMPDIR
mkdir -p "$TMPDIR" || exit 1
if unshare --uts true 2>/dev/null; then
	exec unshare --uts /bin/sh -c "hostname '$host' && $*"
fi
exec /bin/sh -c "$*"
