#!/usr/bin/env bash
# Installs what collio needs to build and test on a fresh Debian/Ubuntu
# machine: Open MPI (mpirun, headers, libmpi), pkg-config, python3 (the C
# tests check COLLIO_STATS's JSON with it) and gfortran (for mpifort: the
# Fortran tests). Does nothing when they are already there.
set -euo pipefail
if command -v mpirun >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1 &&
	pkg-config --exists ompi-c && command -v python3 >/dev/null 2>&1 && command -v gfortran >/dev/null 2>&1; then
	exit 0
fi
echo "collio: installing openmpi-bin libopenmpi-dev pkg-config python3 gfortran" >&2
sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "collio: need root or sudo to install Open MPI" >&2; exit 1; }
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq openmpi-bin libopenmpi-dev pkg-config python3 gfortran >/dev/null
